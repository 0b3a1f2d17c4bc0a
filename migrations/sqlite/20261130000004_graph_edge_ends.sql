-- A node's edges by either end (node panel: neighbours and their degrees).
CREATE INDEX graph_edges_source ON graph_edges(source_id);
CREATE INDEX graph_edges_target ON graph_edges(target_id);
