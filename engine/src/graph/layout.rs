//! A force-directed layout for the graph explorer: Fruchterman–Reingold
//! (1991) with a Barnes–Hut quadtree for the repulsive forces (O(n log n)
//! per iteration instead of O(n²)). Each connected component is laid out on
//! its own (with a gentle pull to its centre), then the components are
//! packed in rows, largest first, so a graph with many small components
//! does not turn into one dense ball ringed by outcasts. Seeded, so a graph
//! always gets the same picture. It runs once when a graph is stored; the
//! browser only draws.
//!
//! Units: the ideal edge length is 1; a component of m nodes fills a disc
//! of radius about √m.

/// Barnes–Hut opening criterion: a cell is treated as one body when its
/// width is under `THETA` times its distance.
const THETA: f64 = 0.9;
const MAX_DEPTH: usize = 32;
const NONE: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Cell {
    cx: f64,
    cy: f64,
    half: f64,
    mass: f64,
    mx: f64,
    my: f64,
    /// Index of the first of four children, or NONE for a leaf.
    children: u32,
    /// The body of a leaf holding exactly one.
    body: u32,
}

impl Cell {
    fn new(cx: f64, cy: f64, half: f64) -> Cell {
        Cell { cx, cy, half, mass: 0.0, mx: 0.0, my: 0.0, children: NONE, body: NONE }
    }
    fn quadrant(&self, x: f64, y: f64) -> u32 {
        u32::from(x >= self.cx) + 2 * u32::from(y >= self.cy)
    }
}

struct QuadTree {
    cells: Vec<Cell>,
}

impl QuadTree {
    fn build(pos: &[[f64; 2]]) -> QuadTree {
        let (mut lo, mut hi) = ([f64::MAX; 2], [f64::MIN; 2]);
        for p in pos {
            for d in 0..2 {
                lo[d] = lo[d].min(p[d]);
                hi[d] = hi[d].max(p[d]);
            }
        }
        let half = ((hi[0] - lo[0]).max(hi[1] - lo[1]) / 2.0).max(1e-6) * 1.001;
        let mut tree = QuadTree { cells: Vec::with_capacity(pos.len() * 2) };
        tree.cells.push(Cell::new((lo[0] + hi[0]) / 2.0, (lo[1] + hi[1]) / 2.0, half));
        for (i, p) in pos.iter().enumerate() {
            tree.insert(i as u32, *p, pos);
        }
        tree
    }

    fn insert(&mut self, body: u32, [x, y]: [f64; 2], pos: &[[f64; 2]]) {
        let mut c = 0usize;
        for depth in 0.. {
            let cell = &mut self.cells[c];
            let m = cell.mass;
            cell.mx = (cell.mx * m + x) / (m + 1.0);
            cell.my = (cell.my * m + y) / (m + 1.0);
            cell.mass = m + 1.0;
            if m == 0.0 {
                cell.body = body;
                return;
            }
            if cell.children == NONE {
                if depth >= MAX_DEPTH {
                    // Coincident points: an aggregate leaf.
                    cell.body = NONE;
                    return;
                }
                let (cx, cy, h) = (cell.cx, cell.cy, cell.half / 2.0);
                let old = std::mem::replace(&mut cell.body, NONE);
                let first = self.cells.len() as u32;
                self.cells[c].children = first;
                for q in 0..4 {
                    let dx = if q & 1 == 1 { h } else { -h };
                    let dy = if q & 2 == 2 { h } else { -h };
                    self.cells.push(Cell::new(cx + dx, cy + dy, h));
                }
                if old != NONE {
                    let [ox, oy] = pos[old as usize];
                    let q = self.cells[c].quadrant(ox, oy);
                    let child = &mut self.cells[(first + q) as usize];
                    child.mass = 1.0;
                    child.mx = ox;
                    child.my = oy;
                    child.body = old;
                }
            }
            let cell = &self.cells[c];
            c = (cell.children + cell.quadrant(x, y)) as usize;
        }
    }

    /// The repulsive force on `body` at `p`: Σ k²/d over the other bodies (k = 1).
    fn repulsion(&self, body: u32, [x, y]: [f64; 2], stack: &mut Vec<u32>) -> [f64; 2] {
        let mut f = [0.0; 2];
        stack.clear();
        stack.push(0);
        while let Some(c) = stack.pop() {
            let cell = &self.cells[c as usize];
            if cell.mass == 0.0 || (cell.children == NONE && cell.body == body) {
                continue;
            }
            let (dx, dy) = (x - cell.mx, y - cell.my);
            let d2 = dx * dx + dy * dy;
            let width = 2.0 * cell.half;
            if cell.children == NONE || width * width < THETA * THETA * d2 {
                let d2 = d2.max(1e-4);
                // k²/d along the unit vector = (dx, dy)·mass/d².
                f[0] += dx * cell.mass / d2;
                f[1] += dy * cell.mass / d2;
            } else {
                stack.extend(cell.children..cell.children + 4);
            }
        }
        f
    }
}

/// Positions for `n` nodes joined by `edges` (indices; weights ignored):
/// components laid out apart and packed.
pub fn layout(n: usize, edges: &[(usize, usize)], iterations: usize, seed: u64) -> Vec<[f32; 2]> {
    let labels = super::component_labels(n, edges);
    let mut members: std::collections::BTreeMap<usize, Vec<usize>> = std::collections::BTreeMap::new();
    for i in 0..n {
        members.entry(labels[i]).or_default().push(i);
    }
    let mut groups: Vec<Vec<usize>> = members.into_values().collect();
    groups.sort_by(|a, b| b.len().cmp(&a.len()).then(a[0].cmp(&b[0])));
    let mut local = vec![usize::MAX; n];
    for g in &groups {
        for (k, &i) in g.iter().enumerate() {
            local[i] = k;
        }
    }
    let mut group_edges: Vec<Vec<(usize, usize)>> = vec![Vec::new(); groups.len()];
    let group_of: std::collections::HashMap<usize, usize> =
        groups.iter().enumerate().map(|(gi, g)| (labels[g[0]], gi)).collect();
    for &(a, b) in edges.iter().filter(|(a, b)| *a < n && *b < n && a != b) {
        group_edges[group_of[&labels[a]]].push((local[a], local[b]));
    }
    // Lay out each component, centred on its mean; note its radius.
    let mut parts: Vec<(Vec<[f64; 2]>, f64)> = Vec::with_capacity(groups.len());
    for (gi, g) in groups.iter().enumerate() {
        let mut pos = if g.len() == 1 {
            vec![[0.0, 0.0]]
        } else {
            force_directed(g.len(), &group_edges[gi], iterations, seed.wrapping_add(gi as u64))
        };
        let c = pos.iter().fold([0.0, 0.0], |c, p| [c[0] + p[0], c[1] + p[1]]);
        let c = [c[0] / g.len() as f64, c[1] / g.len() as f64];
        let mut r: f64 = 0.5;
        for p in pos.iter_mut() {
            p[0] -= c[0];
            p[1] -= c[1];
            r = r.max((p[0] * p[0] + p[1] * p[1]).sqrt());
        }
        parts.push((pos, r));
    }
    // Shelf packing: rows of squares of side 2r + gap, about 1.6 times as wide as tall.
    let gap = 1.0;
    let area: f64 = parts.iter().map(|(_, r)| (2.0 * r + gap).powi(2)).sum();
    let width = (area * 1.6).sqrt().max(2.0 * parts.first().map_or(0.0, |p| p.1) + gap);
    let (mut x, mut y, mut row_h) = (0.0f64, 0.0f64, 0.0f64);
    let mut out = vec![[0.0f32; 2]; n];
    let mut placed: Vec<[f64; 2]> = Vec::with_capacity(parts.len());
    for (_, r) in &parts {
        let side = 2.0 * r + gap;
        if x > 0.0 && x + side > width {
            x = 0.0;
            y += row_h;
            row_h = 0.0;
        }
        placed.push([x + side / 2.0, y + side / 2.0]);
        x += side;
        row_h = row_h.max(side);
    }
    let (total_w, total_h) = (width, y + row_h);
    for ((g, (pos, _)), centre) in groups.iter().zip(&parts).zip(&placed) {
        for (k, &i) in g.iter().enumerate() {
            out[i] = [(pos[k][0] + centre[0] - total_w / 2.0) as f32, (pos[k][1] + centre[1] - total_h / 2.0) as f32];
        }
    }
    out
}

/// Fruchterman–Reingold with Barnes–Hut repulsion on one component.
fn force_directed(n: usize, edges: &[(usize, usize)], iterations: usize, seed: u64) -> Vec<[f64; 2]> {
    if n == 0 {
        return Vec::new();
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    let radius = (n as f64).sqrt();
    let mut pos: Vec<[f64; 2]> = (0..n)
        .map(|_| {
            let (r, a) = (radius * rng.f64().sqrt(), std::f64::consts::TAU * rng.f64());
            [r * a.cos(), r * a.sin()]
        })
        .collect();
    let mut disp = vec![[0.0f64; 2]; n];
    let mut stack = Vec::new();
    // Gravity balances the repulsion of n bodies at radius ≈ √n.
    let gravity = 0.5;
    let t0 = radius / 5.0;
    for it in 0..iterations {
        let tree = QuadTree::build(&pos);
        for (i, d) in disp.iter_mut().enumerate() {
            *d = tree.repulsion(i as u32, pos[i], &mut stack);
            d[0] -= gravity * pos[i][0] / radius;
            d[1] -= gravity * pos[i][1] / radius;
        }
        for &(a, b) in edges {
            if a == b || a >= n || b >= n {
                continue;
            }
            let (dx, dy) = (pos[a][0] - pos[b][0], pos[a][1] - pos[b][1]);
            // d²/k along the unit vector = (dx, dy)·d.
            let d = (dx * dx + dy * dy).sqrt();
            disp[a][0] -= dx * d;
            disp[a][1] -= dy * d;
            disp[b][0] += dx * d;
            disp[b][1] += dy * d;
        }
        // Linear cooling, never quite to zero.
        let t = t0 * (1.0 - it as f64 / iterations as f64) + 0.01;
        for (p, d) in pos.iter_mut().zip(&disp) {
            let len = (d[0] * d[0] + d[1] * d[1]).sqrt();
            if len > 0.0 {
                let step = len.min(t) / len;
                p[0] += d[0] * step;
                p[1] += d[1] * step;
            }
        }
    }
    pos
}

/// Iterations for a graph of `n` nodes: fewer for large graphs, whose
/// layout would otherwise take seconds.
pub fn default_iterations(n: usize) -> usize {
    match n {
        0..=1_000 => 300,
        1_001..=10_000 => 150,
        _ => 60,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dist(a: [f32; 2], b: [f32; 2]) -> f32 {
        ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
    }

    #[test]
    fn barnes_hut_repulsion_matches_the_exact_sum_within_a_few_percent() {
        let mut rng = fastrand::Rng::with_seed(7);
        let pos: Vec<[f64; 2]> = (0..2_000).map(|_| [rng.f64() * 40.0, rng.f64() * 40.0]).collect();
        let tree = QuadTree::build(&pos);
        let mut stack = Vec::new();
        for i in [0usize, 17, 999, 1_999] {
            let approx = tree.repulsion(i as u32, pos[i], &mut stack);
            let mut exact = [0.0; 2];
            for (_, q) in pos.iter().enumerate().filter(|(j, _)| *j != i) {
                let (dx, dy) = (pos[i][0] - q[0], pos[i][1] - q[1]);
                let d2 = (dx * dx + dy * dy).max(1e-4);
                exact[0] += dx / d2;
                exact[1] += dy / d2;
            }
            let err = ((approx[0] - exact[0]).powi(2) + (approx[1] - exact[1]).powi(2)).sqrt();
            let norm = (exact[0].powi(2) + exact[1].powi(2)).sqrt();
            assert!(err <= 0.05 * norm.max(1.0), "body {i}: {approx:?} vs {exact:?}");
        }
    }

    #[test]
    fn linked_nodes_end_closer_than_unlinked_ones_and_the_layout_is_seeded() {
        // Two 10-cliques joined by one edge.
        let mut edges = Vec::new();
        for g in [0, 10] {
            for a in g..g + 10 {
                for b in a + 1..g + 10 {
                    edges.push((a, b));
                }
            }
        }
        edges.push((0, 10));
        let pos = layout(20, &edges, 300, 42);
        assert!(pos.iter().all(|p| p[0].is_finite() && p[1].is_finite()));
        let within = dist(pos[1], pos[2]) + dist(pos[11], pos[12]);
        let across = dist(pos[1], pos[12]) + dist(pos[2], pos[11]);
        assert!(within * 2.0 < across, "cliques stay together: within {within}, across {across}");
        assert_eq!(layout(20, &edges, 300, 42), pos);
        assert_ne!(layout(20, &edges, 300, 43), pos);
        // Coincident starting points do not break the tree.
        assert_eq!(layout(1, &[], 10, 1).len(), 1);
        // Components do not overlap: a triangle and 30 loners.
        let pos = layout(33, &[(0, 1), (1, 2), (0, 2)], 100, 1);
        for i in 3..33 {
            for j in 0..33 {
                if i != j {
                    assert!(dist(pos[i], pos[j]) >= 0.99, "{i} and {j} overlap");
                }
            }
        }
        let spread = pos.iter().map(|p| p[0].abs().max(p[1].abs())).fold(0.0f32, f32::max);
        assert!(spread < 8.0, "31 components pack into a small area, not a ring: {spread}");
        assert!(layout(0, &[], 10, 1).is_empty());
    }
}
