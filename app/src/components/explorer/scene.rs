//! The explorer's state without the DOM: positions, camera, filters,
//! hit-testing and label placement. The canvas module draws a `Scene` and
//! feeds it pointer events; this part is plain Rust and unit-tested natively.

use std::collections::VecDeque;

use crate::model::GraphView;

/// What the user narrowed the view to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filters {
    pub colour_by_community: bool,
    /// Type indices (into `GraphView::types`) not shown.
    pub hidden_types: Vec<u16>,
    pub community: Option<i64>,
    pub min_degree: u32,
    /// Show only the nodes within `hops` of this node id.
    pub focus: Option<(i64, u32)>,
    /// Node ids drawn emphasised; the others dimmed.
    pub highlight: Vec<i64>,
}

/// World → screen: `screen = world · scale + (tx, ty)`, in CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    pub scale: f64,
    pub tx: f64,
    pub ty: f64,
}

pub struct Scene {
    pub data: GraphView,
    pub pos: Vec<[f64; 2]>,
    pub adj: Vec<Vec<u32>>,
    pub visible: Vec<bool>,
    pub emphasised: Vec<bool>,
    /// Whether anything is emphasised (then the rest is dimmed).
    pub dimming: bool,
    pub colour_by_community: bool,
    pub camera: Camera,
    pub width: f64,
    pub height: f64,
    pub selected: Option<usize>,
    pub selected_edge: Option<usize>,
    /// The scale at which the whole graph fits: node sizes grow relative to it.
    pub fit_scale: f64,
    /// Node sizes shrink for crowded graphs (1 for a few hundred nodes).
    pub node_scale: f64,
}

impl Scene {
    pub fn new(data: GraphView, width: f64, height: f64) -> Scene {
        let n = data.nodes.len();
        let mut adj = vec![Vec::new(); n];
        for &(a, b) in &data.edges {
            if (a as usize) < n && (b as usize) < n {
                adj[a as usize].push(b);
                adj[b as usize].push(a);
            }
        }
        let pos = data.nodes.iter().map(|v| [v.x as f64, v.y as f64]).collect();
        let mut scene = Scene {
            data,
            pos,
            adj,
            visible: vec![true; n],
            emphasised: vec![false; n],
            dimming: false,
            colour_by_community: false,
            camera: Camera { scale: 1.0, tx: 0.0, ty: 0.0 },
            width,
            height,
            selected: None,
            selected_edge: None,
            fit_scale: 1.0,
            node_scale: 1.0,
        };
        scene.refit();
        scene
    }

    /// Fits the whole graph and takes its sizes from that view.
    fn refit(&mut self) {
        self.fit(None);
        self.fit_scale = self.camera.scale;
        // The room per node at the fitted view, against 30 px.
        let spacing = (self.width * self.height / self.pos.len().max(1) as f64).sqrt();
        self.node_scale = (spacing / 30.0).clamp(0.35, 1.0);
    }

    pub fn index_of(&self, id: i64) -> Option<usize> {
        self.data.nodes.iter().position(|n| n.id == id)
    }

    /// Node indices within `hops` of `start` (breadth first).
    pub fn within_hops(&self, start: usize, hops: u32) -> Vec<bool> {
        let mut seen = vec![false; self.pos.len()];
        let mut queue = VecDeque::from([(start, 0u32)]);
        seen[start] = true;
        while let Some((i, d)) = queue.pop_front() {
            if d == hops {
                continue;
            }
            for &j in &self.adj[i] {
                if !seen[j as usize] {
                    seen[j as usize] = true;
                    queue.push_back((j as usize, d + 1));
                }
            }
        }
        seen
    }

    pub fn apply(&mut self, f: &Filters) {
        self.colour_by_community = f.colour_by_community;
        let focus = f.focus.and_then(|(id, hops)| Some(self.within_hops(self.index_of(id)?, hops)));
        for (i, n) in self.data.nodes.iter().enumerate() {
            self.visible[i] = !f.hidden_types.contains(&n.kind)
                && f.community.is_none_or(|c| c == n.community)
                && n.degree >= f.min_degree
                && focus.as_ref().is_none_or(|set| set[i]);
        }
        self.emphasised.iter_mut().for_each(|e| *e = false);
        for id in &f.highlight {
            if let Some(i) = self.index_of(*id) {
                self.emphasised[i] = true;
            }
        }
        self.dimming = !f.highlight.is_empty();
        if self.selected.is_some_and(|i| !self.visible[i]) {
            self.selected = None;
        }
    }

    /// Fits the camera to the visible nodes (or to `only`, when given).
    pub fn fit(&mut self, only: Option<&[usize]>) {
        let all: Vec<usize> = (0..self.pos.len()).filter(|&i| self.visible[i]).collect();
        let chosen = only.filter(|o| !o.is_empty()).unwrap_or(&all);
        if chosen.is_empty() {
            return;
        }
        let (mut lo, mut hi) = ([f64::MAX; 2], [f64::MIN; 2]);
        for &i in chosen {
            for d in 0..2 {
                lo[d] = lo[d].min(self.pos[i][d]);
                hi[d] = hi[d].max(self.pos[i][d]);
            }
        }
        let (w, h) = ((hi[0] - lo[0]).max(1.0), (hi[1] - lo[1]).max(1.0));
        let scale = (self.width / w).min(self.height / h) * 0.88;
        self.camera = Camera {
            scale,
            tx: self.width / 2.0 - (lo[0] + hi[0]) / 2.0 * scale,
            ty: self.height / 2.0 - (lo[1] + hi[1]) / 2.0 * scale,
        };
    }

    /// The canvas changed size: keep the centre where it was, or, if the
    /// scene was made before the canvas had a size, fit it now.
    pub fn resize(&mut self, width: f64, height: f64) {
        if (self.width, self.height) == (width, height) {
            return;
        }
        let had_no_size = self.width <= 2.0 || self.height <= 2.0;
        self.camera.tx += (width - self.width) / 2.0;
        self.camera.ty += (height - self.height) / 2.0;
        self.width = width;
        self.height = height;
        if had_no_size {
            let emphasised: Vec<usize> = (0..self.pos.len()).filter(|&i| self.emphasised[i]).collect();
            self.refit();
            self.fit(Some(&emphasised));
            if let Some(i) = self.selected.filter(|&i| self.visible[i]) {
                self.center_on(i);
            }
        }
    }

    /// Puts node `i` in the middle, zoomed in at least to twice the fit.
    pub fn center_on(&mut self, i: usize) {
        let scale = self.camera.scale.max(self.fit_scale * 2.0);
        self.camera = Camera {
            scale,
            tx: self.width / 2.0 - self.pos[i][0] * scale,
            ty: self.height / 2.0 - self.pos[i][1] * scale,
        };
    }

    pub fn to_world(&self, sx: f64, sy: f64) -> [f64; 2] {
        [(sx - self.camera.tx) / self.camera.scale, (sy - self.camera.ty) / self.camera.scale]
    }

    pub fn to_screen(&self, p: [f64; 2]) -> [f64; 2] {
        [p[0] * self.camera.scale + self.camera.tx, p[1] * self.camera.scale + self.camera.ty]
    }

    /// A node's radius on screen, in CSS pixels: grows with degree, and
    /// with zoom (gently).
    pub fn radius_px(&self, i: usize) -> f64 {
        let zoom = (self.camera.scale / self.fit_scale).sqrt().clamp(0.6, 4.0);
        (2.0 + 1.4 * (self.data.nodes[i].degree as f64).sqrt()) * zoom * self.node_scale
    }

    /// Zooms by `factor` keeping the world point under (sx, sy) in place.
    pub fn zoom_at(&mut self, sx: f64, sy: f64, factor: f64) {
        let [wx, wy] = self.to_world(sx, sy);
        let scale = (self.camera.scale * factor).clamp(self.fit_scale * 0.2, self.fit_scale * 200.0);
        self.camera = Camera { scale, tx: sx - wx * scale, ty: sy - wy * scale };
    }

    /// The visible node under a screen point (the nearest, within its radius plus 3 px).
    pub fn node_at(&self, sx: f64, sy: f64) -> Option<usize> {
        let mut best: Option<(f64, usize)> = None;
        for i in (0..self.pos.len()).filter(|&i| self.visible[i]) {
            let [x, y] = self.to_screen(self.pos[i]);
            let d = ((x - sx).powi(2) + (y - sy).powi(2)).sqrt();
            if d <= self.radius_px(i) + 3.0 && best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, i));
            }
        }
        best.map(|(_, i)| i)
    }

    /// The visible edge under a screen point (within 4 px of the segment).
    pub fn edge_at(&self, sx: f64, sy: f64) -> Option<usize> {
        let mut best: Option<(f64, usize)> = None;
        for (k, &(a, b)) in self.data.edges.iter().enumerate() {
            let (a, b) = (a as usize, b as usize);
            if !(self.visible[a] && self.visible[b]) {
                continue;
            }
            let (p, q) = (self.to_screen(self.pos[a]), self.to_screen(self.pos[b]));
            let d = segment_distance([sx, sy], p, q);
            if d <= 4.0 && best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, k));
            }
        }
        best.map(|(_, k)| k)
    }

    /// Which nodes get a label: the selected and emphasised ones, then by
    /// degree (the view's order) those large enough on screen, skipping any
    /// label that would overlap one already placed. At most `max`.
    pub fn labels(&self, char_px: f64, max: usize) -> Vec<usize> {
        let mut placed: Vec<[f64; 4]> = Vec::new();
        let mut out = Vec::new();
        let first = self.selected.into_iter().chain((0..self.pos.len()).filter(|&i| self.emphasised[i]));
        let rest = (0..self.pos.len()).filter(|&i| worth_a_label(i, self));
        for i in first.chain(rest) {
            if out.len() >= max || out.contains(&i) || !self.visible[i] {
                continue;
            }
            let [x, y] = self.to_screen(self.pos[i]);
            if x < -50.0 || y < -20.0 || x > self.width + 50.0 || y > self.height + 20.0 {
                continue;
            }
            let w = self.data.nodes[i].name.chars().count() as f64 * char_px;
            let r = self.radius_px(i);
            let rect = [x + r + 2.0, y - 7.0, x + r + 2.0 + w, y + 7.0];
            let forced = Some(i) == self.selected || self.emphasised[i];
            if !forced && placed.iter().any(|p| rect[0] < p[2] && p[0] < rect[2] && rect[1] < p[3] && p[1] < rect[3]) {
                continue;
            }
            placed.push(rect);
            out.push(i);
        }
        out
    }
}

/// Labels go to nodes that are big enough on screen, or among the 30 of highest degree.
fn worth_a_label(i: usize, s: &Scene) -> bool {
    i < 30 || s.radius_px(i) >= 7.0
}

/// Distance from point `p` to the segment `a`–`b`.
pub fn segment_distance(p: [f64; 2], a: [f64; 2], b: [f64; 2]) -> f64 {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let len2 = dx * dx + dy * dy;
    let t = if len2 == 0.0 { 0.0 } else { (((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / len2).clamp(0.0, 1.0) };
    let (cx, cy) = (a[0] + t * dx, a[1] + t * dy);
    ((p[0] - cx).powi(2) + (p[1] - cy).powi(2)).sqrt()
}

/// Twelve distinguishable colours (Tableau 10 and two more).
pub const PALETTE: [&str; 12] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
    "#1f77b4", "#8c564b",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ViewNode;

    /// A path 0–1–2–3 and a separate node 4, in a row.
    fn scene() -> Scene {
        let nodes = (0..5)
            .map(|i| ViewNode {
                id: 100 + i,
                name: format!("N{i}"),
                kind: (i % 2) as u16,
                community: i / 3,
                degree: [1, 2, 2, 1, 0][i as usize],
                x: i as f32 * 10.0,
                y: 0.0,
            })
            .collect();
        let data = GraphView {
            nodes,
            edges: vec![(0, 1), (1, 2), (2, 3)],
            types: vec!["person".into(), "location".into()],
            total_nodes: 5,
            total_edges: 3,
        };
        Scene::new(data, 800.0, 400.0)
    }

    #[test]
    fn fitting_puts_every_node_on_screen_and_screen_world_round_trip() {
        let s = scene();
        for i in 0..5 {
            let [x, y] = s.to_screen(s.pos[i]);
            assert!((0.0..=800.0).contains(&x) && (0.0..=400.0).contains(&y), "node {i} at {x},{y}");
            let w = s.to_world(x, y);
            assert!((w[0] - s.pos[i][0]).abs() < 1e-9 && (w[1] - s.pos[i][1]).abs() < 1e-9);
        }
    }

    #[test]
    fn hit_testing_finds_the_node_then_the_edge_under_the_pointer() {
        let s = scene();
        let [x, y] = s.to_screen(s.pos[2]);
        assert_eq!(s.node_at(x + 1.0, y), Some(2));
        let mid = s.to_screen([5.0, 0.0]);
        assert_eq!(s.node_at(mid[0], mid[1]), None);
        assert_eq!(s.edge_at(mid[0], mid[1] + 2.0), Some(0), "between nodes 0 and 1");
        assert_eq!(s.edge_at(mid[0], mid[1] + 30.0), None);
        assert_eq!(segment_distance([0.0, 5.0], [-1.0, 0.0], [1.0, 0.0]), 5.0);
        assert_eq!(segment_distance([3.0, 4.0], [0.0, 0.0], [0.0, 0.0]), 5.0);
    }

    #[test]
    fn filters_hide_by_type_community_degree_and_focus() {
        let mut s = scene();
        s.apply(&Filters { hidden_types: vec![1], ..Default::default() });
        assert_eq!(s.visible, [true, false, true, false, true]);
        s.apply(&Filters { community: Some(1), ..Default::default() });
        assert_eq!(s.visible, [false, false, false, true, true]);
        s.apply(&Filters { min_degree: 2, ..Default::default() });
        assert_eq!(s.visible, [false, true, true, false, false]);
        s.apply(&Filters { focus: Some((100, 2)), ..Default::default() });
        assert_eq!(s.visible, [true, true, true, false, false], "two hops from N0");
        s.apply(&Filters { highlight: vec![103, 999], ..Default::default() });
        assert!(s.dimming);
        assert_eq!(s.emphasised, [false, false, false, true, false]);
        // A hidden node cannot be hit.
        s.apply(&Filters { hidden_types: vec![0], ..Default::default() });
        let [x, y] = s.to_screen(s.pos[2]);
        assert_eq!(s.node_at(x, y), None);
    }

    #[test]
    fn a_scene_made_before_its_canvas_had_a_size_is_fitted_once_it_has_one() {
        let data = scene().data;
        let mut s = Scene::new(data, 0.0, 0.0);
        s.resize(800.0, 400.0);
        for i in 0..5 {
            let [x, y] = s.to_screen(s.pos[i]);
            assert!((0.0..=800.0).contains(&x) && (0.0..=400.0).contains(&y), "node {i} at {x},{y}");
        }
        let before = s.to_screen(s.pos[2]);
        s.resize(1000.0, 400.0);
        let after = s.to_screen(s.pos[2]);
        assert_eq!(after[0] - before[0], 100.0, "a later resize keeps the centre");
    }

    #[test]
    fn zooming_keeps_the_point_under_the_cursor() {
        let mut s = scene();
        let before = s.to_world(300.0, 150.0);
        s.zoom_at(300.0, 150.0, 2.5);
        let after = s.to_world(300.0, 150.0);
        assert!((before[0] - after[0]).abs() < 1e-9 && (before[1] - after[1]).abs() < 1e-9);
        s.center_on(4);
        let [x, y] = s.to_screen(s.pos[4]);
        assert!((x - 400.0).abs() < 1e-9 && (y - 200.0).abs() < 1e-9);
    }

    #[test]
    fn labels_do_not_overlap_except_for_the_selected_node() {
        let mut s = scene();
        // Squeeze everything into a few pixels: only one label fits.
        s.camera.scale = 0.01;
        let labels = s.labels(7.0, 100);
        assert_eq!(labels.len(), 1, "{labels:?}");
        s.selected = Some(3);
        assert_eq!(s.labels(7.0, 100)[0], 3, "the selected node is labelled first");
    }
}
