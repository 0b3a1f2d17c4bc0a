//! Drawing a [`Scene`] on a 2D canvas and turning pointer events into
//! pans, zooms, drags and clicks. Browser only.
//!
//! Redraws happen on demand (one per animation frame at most). The canvas
//! reports how many frames it drew and the last draw's time in
//! `data-frames` and `data-draw-ms` (for the benchmark script), and what
//! it shows in `data-visible`, `data-emphasised` and `data-selected` (for tests).

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{AddEventListenerOptions, CanvasRenderingContext2d, HtmlCanvasElement, PointerEvent, WheelEvent};

use super::scene::{Filters, Scene, PALETTE};
use super::Selection;
use crate::model::GraphView;

enum Drag {
    None,
    Pan { x0: f64, y0: f64, tx0: f64, ty0: f64, moved: bool },
    Node { i: usize, x0: f64, y0: f64, moved: bool },
}

struct Explorer {
    canvas: HtmlCanvasElement,
    ctx: CanvasRenderingContext2d,
    scene: Scene,
    drag: Drag,
    frame_pending: bool,
    frames: u64,
    on_select: Box<dyn Fn(Option<Selection>)>,
    listeners: Vec<(&'static str, Closure<dyn FnMut(web_sys::Event)>)>,
}

thread_local! {
    static EXPLORER: RefCell<Option<Rc<RefCell<Explorer>>>> = const { RefCell::new(None) };
}

fn current() -> Option<Rc<RefCell<Explorer>>> {
    EXPLORER.with(|e| e.borrow().clone())
}

/// Runs `f` on the mounted explorer, if any, and redraws.
pub fn with(f: impl FnOnce(&mut Scene)) {
    if let Some(e) = current() {
        f(&mut e.borrow_mut().scene);
        request_draw(&e);
    }
}

/// Starts the explorer on `canvas` with `data`; replaces any earlier one.
pub fn mount(
    canvas: HtmlCanvasElement,
    data: GraphView,
    filters: &Filters,
    on_select: impl Fn(Option<Selection>) + 'static,
) -> Result<(), JsValue> {
    unmount();
    let ctx: CanvasRenderingContext2d =
        canvas.get_context("2d")?.ok_or_else(|| JsValue::from_str("no 2d context"))?.dyn_into()?;
    let (w, h) = (canvas.client_width().max(1) as f64, canvas.client_height().max(1) as f64);
    let mut scene = Scene::new(data, w, h);
    scene.apply(filters);
    let emphasised: Vec<usize> = (0..scene.pos.len()).filter(|&i| scene.emphasised[i]).collect();
    scene.fit(Some(&emphasised));
    let explorer = Rc::new(RefCell::new(Explorer {
        canvas: canvas.clone(),
        ctx,
        scene,
        drag: Drag::None,
        frame_pending: false,
        frames: 0,
        on_select: Box::new(on_select),
        listeners: Vec::new(),
    }));
    let weak = Rc::downgrade(&explorer);
    let listen = |name: &'static str, handler: fn(&Rc<RefCell<Explorer>>, web_sys::Event)| {
        let weak = weak.clone();
        let closure = Closure::<dyn FnMut(web_sys::Event)>::new(move |ev: web_sys::Event| {
            if let Some(e) = weak.upgrade() {
                handler(&e, ev);
            }
        });
        let options = AddEventListenerOptions::new();
        options.set_passive(false);
        let _ = canvas.add_event_listener_with_callback_and_add_event_listener_options(
            name,
            closure.as_ref().unchecked_ref(),
            &options,
        );
        (name, closure)
    };
    let listeners = vec![
        listen("pointerdown", pointer_down),
        listen("pointermove", pointer_move),
        listen("pointerup", pointer_up),
        listen("pointercancel", pointer_up),
        listen("wheel", wheel),
        listen("dblclick", double_click),
    ];
    explorer.borrow_mut().listeners = listeners;
    request_draw(&explorer);
    EXPLORER.with(|e| *e.borrow_mut() = Some(explorer));
    Ok(())
}

/// Removes the explorer and its listeners (when the page goes away).
pub fn unmount() {
    if let Some(e) = EXPLORER.with(|e| e.borrow_mut().take()) {
        let e = e.borrow();
        for (name, closure) in &e.listeners {
            let _ = e.canvas.remove_event_listener_with_callback(name, closure.as_ref().unchecked_ref());
        }
    }
}

/// Asks for a redraw (the window was resized, the filters changed, …).
pub fn redraw() {
    if let Some(e) = current() {
        request_draw(&e);
    }
}

fn request_draw(e: &Rc<RefCell<Explorer>>) {
    if std::mem::replace(&mut e.borrow_mut().frame_pending, true) {
        return;
    }
    let weak = Rc::downgrade(e);
    leptos::prelude::request_animation_frame(move || {
        if let Some(e) = weak.upgrade() {
            let mut e = e.borrow_mut();
            e.frame_pending = false;
            e.draw();
        }
    });
}

fn offset(ev: &web_sys::Event) -> Option<(f64, f64, &PointerEvent)> {
    let p = ev.dyn_ref::<PointerEvent>()?;
    Some((p.offset_x() as f64, p.offset_y() as f64, p))
}

fn pointer_down(e: &Rc<RefCell<Explorer>>, ev: web_sys::Event) {
    let Some((x, y, p)) = offset(&ev) else { return };
    let mut ex = e.borrow_mut();
    let _ = ex.canvas.set_pointer_capture(p.pointer_id());
    ex.drag = match ex.scene.node_at(x, y) {
        Some(i) => Drag::Node { i, x0: x, y0: y, moved: false },
        None => Drag::Pan { x0: x, y0: y, tx0: ex.scene.camera.tx, ty0: ex.scene.camera.ty, moved: false },
    };
}

fn pointer_move(e: &Rc<RefCell<Explorer>>, ev: web_sys::Event) {
    let Some((x, y, _)) = offset(&ev) else { return };
    {
        let mut guard = e.borrow_mut();
        let ex = &mut *guard;
        match &mut ex.drag {
            Drag::None => {
                let cursor = if ex.scene.node_at(x, y).is_some() { "pointer" } else { "grab" };
                let _ = ex.canvas.style().set_property("cursor", cursor);
                return;
            }
            Drag::Pan { x0, y0, tx0, ty0, moved } => {
                *moved |= (x - *x0).abs() + (y - *y0).abs() > 3.0;
                ex.scene.camera.tx = *tx0 + x - *x0;
                ex.scene.camera.ty = *ty0 + y - *y0;
            }
            Drag::Node { i, x0, y0, moved } => {
                *moved |= (x - *x0).abs() + (y - *y0).abs() > 3.0;
                if *moved {
                    let i = *i;
                    ex.scene.pos[i] = ex.scene.to_world(x, y);
                }
            }
        }
    }
    request_draw(e);
}

fn pointer_up(e: &Rc<RefCell<Explorer>>, ev: web_sys::Event) {
    let Some((x, y, _)) = offset(&ev) else { return };
    let selection = {
        let mut ex = e.borrow_mut();
        let drag = std::mem::replace(&mut ex.drag, Drag::None);
        let s = &mut ex.scene;
        match drag {
            Drag::Node { i, moved: false, .. } => {
                s.selected = Some(i);
                s.selected_edge = None;
                Some(Some(Selection::Node(s.data.nodes[i].id)))
            }
            Drag::Pan { moved: false, .. } => match s.edge_at(x, y) {
                Some(k) => {
                    let (a, b) = s.data.edges[k];
                    s.selected = None;
                    s.selected_edge = Some(k);
                    Some(Some(Selection::Edge(s.data.nodes[a as usize].id, s.data.nodes[b as usize].id)))
                }
                None => {
                    s.selected = None;
                    s.selected_edge = None;
                    Some(None)
                }
            },
            _ => None,
        }
    };
    if let Some(sel) = selection {
        (e.borrow().on_select)(sel);
    }
    request_draw(e);
}

fn wheel(e: &Rc<RefCell<Explorer>>, ev: web_sys::Event) {
    let Some(w) = ev.dyn_ref::<WheelEvent>() else { return };
    w.prevent_default();
    // Lines and pages count as about 16 and 400 pixels.
    let unit = match w.delta_mode() {
        1 => 16.0,
        2 => 400.0,
        _ => 1.0,
    };
    let factor = (-w.delta_y() * unit * 0.0015).exp();
    e.borrow_mut().scene.zoom_at(w.offset_x() as f64, w.offset_y() as f64, factor);
    request_draw(e);
}

fn double_click(e: &Rc<RefCell<Explorer>>, ev: web_sys::Event) {
    let Some(m) = ev.dyn_ref::<web_sys::MouseEvent>() else { return };
    e.borrow_mut().scene.zoom_at(m.offset_x() as f64, m.offset_y() as f64, 2.0);
    request_draw(e);
}

impl Explorer {
    fn draw(&mut self) {
        let started = js_now();
        let dpr = web_sys::window().map_or(1.0, |w| w.device_pixel_ratio());
        let (w, h) = (self.canvas.client_width().max(1) as f64, self.canvas.client_height().max(1) as f64);
        let (pw, ph) = ((w * dpr).round() as u32, (h * dpr).round() as u32);
        if self.canvas.width() != pw || self.canvas.height() != ph {
            self.canvas.set_width(pw);
            self.canvas.set_height(ph);
        }
        self.scene.resize(w, h);
        let ctx = &self.ctx;
        let s = &self.scene;
        let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
        ctx.set_fill_style_str("#fbfcfd");
        ctx.fill_rect(0.0, 0.0, w, h);
        let cam = s.camera;
        let _ = ctx.set_transform(dpr * cam.scale, 0.0, 0.0, dpr * cam.scale, dpr * cam.tx, dpr * cam.ty);
        let px = 1.0 / cam.scale;

        // Edges: one path for all, then the emphasised ones over them.
        let touches = |a: usize, b: usize| {
            s.selected.is_some_and(|i| i == a || i == b) || (s.dimming && s.emphasised[a] && s.emphasised[b])
        };
        ctx.begin_path();
        let mut strong = Vec::new();
        for (k, &(a, b)) in s.data.edges.iter().enumerate() {
            let (a, b) = (a as usize, b as usize);
            if !(s.visible[a] && s.visible[b]) {
                continue;
            }
            if touches(a, b) || s.selected_edge == Some(k) {
                strong.push((a, b));
                continue;
            }
            ctx.move_to(s.pos[a][0], s.pos[a][1]);
            ctx.line_to(s.pos[b][0], s.pos[b][1]);
        }
        let faint = if s.dimming || s.selected.is_some() { "rgba(120,130,145,0.10)" } else { "rgba(120,130,145,0.28)" };
        ctx.set_stroke_style_str(faint);
        ctx.set_line_width(px);
        ctx.stroke();
        if !strong.is_empty() {
            ctx.begin_path();
            for (a, b) in strong {
                ctx.move_to(s.pos[a][0], s.pos[a][1]);
                ctx.line_to(s.pos[b][0], s.pos[b][1]);
            }
            ctx.set_stroke_style_str("rgba(31,78,121,0.75)");
            ctx.set_line_width(1.6 * px);
            ctx.stroke();
        }

        // Nodes: one path per colour; dimmed nodes first, in grey.
        let neighbour_of_selected: Vec<bool> = match s.selected {
            Some(sel) => {
                let mut v = vec![false; s.pos.len()];
                v[sel] = true;
                for &j in &s.adj[sel] {
                    v[j as usize] = true;
                }
                v
            }
            None => Vec::new(),
        };
        let dimmed = |i: usize| {
            (s.dimming && !s.emphasised[i]) || (!neighbour_of_selected.is_empty() && !neighbour_of_selected[i])
        };
        let colour_of = |i: usize| {
            let n = &s.data.nodes[i];
            let c = if s.colour_by_community { n.community.unsigned_abs() as usize } else { n.kind as usize };
            c % PALETTE.len()
        };
        let mut buckets: Vec<Vec<usize>> = vec![Vec::new(); PALETTE.len() + 1];
        for i in (0..s.pos.len()).filter(|&i| s.visible[i]) {
            buckets[if dimmed(i) { PALETTE.len() } else { colour_of(i) }].push(i);
        }
        for (c, bucket) in buckets.iter().enumerate().rev() {
            if bucket.is_empty() {
                continue;
            }
            ctx.begin_path();
            for &i in bucket {
                let r = s.radius_px(i) * px;
                let [x, y] = s.pos[i];
                ctx.move_to(x + r, y);
                let _ = ctx.arc(x, y, r, 0.0, std::f64::consts::TAU);
            }
            ctx.set_fill_style_str(if c == PALETTE.len() { "rgba(170,178,189,0.45)" } else { PALETTE[c] });
            ctx.fill();
        }
        // Rings: emphasised nodes, and the selection.
        let ring = |i: usize, colour: &str, width: f64| {
            let r = s.radius_px(i) * px + 2.0 * px;
            ctx.begin_path();
            let _ = ctx.arc(s.pos[i][0], s.pos[i][1], r, 0.0, std::f64::consts::TAU);
            ctx.set_stroke_style_str(colour);
            ctx.set_line_width(width * px);
            ctx.stroke();
        };
        for i in (0..s.pos.len()).filter(|&i| s.visible[i] && s.emphasised[i]) {
            ring(i, "#1d2430", 1.5);
        }
        if let Some(i) = s.selected {
            ring(i, "#d62728", 2.5);
        }

        // Labels in screen space.
        let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
        ctx.set_font("12px system-ui, sans-serif");
        ctx.set_text_baseline("middle");
        ctx.set_line_width(3.0);
        ctx.set_stroke_style_str("rgba(251,252,253,0.9)");
        for i in s.labels(6.6, 160) {
            let [x, y] = s.to_screen(s.pos[i]);
            let x = x + s.radius_px(i) + 3.0;
            let name = &s.data.nodes[i].name;
            let _ = ctx.stroke_text(name, x, y);
            ctx.set_fill_style_str(if dimmed(i) { "#8a94a3" } else { "#1d2430" });
            let _ = ctx.fill_text(name, x, y);
        }
        self.frames += 1;
        let ms = js_now() - started;
        let _ = self.canvas.set_attribute("data-frames", &self.frames.to_string());
        let _ = self.canvas.set_attribute("data-draw-ms", &format!("{ms:.2}"));
        let s = &self.scene;
        let visible = s.visible.iter().filter(|v| **v).count();
        let emphasised = (0..s.pos.len()).filter(|&i| s.visible[i] && s.emphasised[i]).count();
        let _ = self.canvas.set_attribute("data-visible", &visible.to_string());
        let _ = self.canvas.set_attribute("data-emphasised", &emphasised.to_string());
        let selected = s.selected.map(|i| s.data.nodes[i].id.to_string()).unwrap_or_default();
        let _ = self.canvas.set_attribute("data-selected", &selected);
    }
}

fn js_now() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now())
}
