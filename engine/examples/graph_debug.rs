//! Prints the offline graph of a text file: nodes, edges, the top 20 by degree.
//! `cargo run -p engine --example graph_debug -- FILE`
fn main() {
    let path = std::env::args().nth(1).expect("a text file");
    let text = std::fs::read_to_string(path).unwrap().replace("\r\n", "\n");
    let mut g = engine::graph::KnowledgeGraph::default();
    for c in engine::chunk::chunk_text(&text, &Default::default()).unwrap() {
        g.merge(c.index as i64, &engine::graph::offline::extract(&text[c.start..c.end]));
    }
    println!("{} nodes, {} edges", g.nodes.len(), g.edges.len());
    for (k, d) in g.by_degree().into_iter().take(20) {
        println!("{d:4}  {} ({})", g.nodes[&k].name, g.nodes[&k].kind);
    }
}
