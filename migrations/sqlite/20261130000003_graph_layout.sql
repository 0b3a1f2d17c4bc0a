-- Explorer positions, computed once when a graph is stored (force-directed,
-- seeded; engine::graph::layout).
ALTER TABLE graph_nodes ADD COLUMN x REAL NOT NULL DEFAULT 0;
ALTER TABLE graph_nodes ADD COLUMN y REAL NOT NULL DEFAULT 0;
