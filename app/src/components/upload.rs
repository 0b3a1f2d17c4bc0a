//! The corpus upload zone: drag-and-drop or a file picker, several files at
//! once, a progress bar while the bytes travel, and the server's report of
//! what was added and what was refused (file by file, with the reason).
//!
//! Uploads go by `XMLHttpRequest` to `POST /api/projects/{id}/upload`
//! (multipart), because only XHR reports upload progress. Files over the
//! per-file limit are refused here before anything is sent.

use leptos::prelude::*;

use crate::format;
use crate::model::{Rejection, UploadLimits, UploadReport};

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
enum Phase {
    Idle,
    Sending {
        loaded: f64,
        total: f64,
        files: usize,
    },
    /// Bytes are all sent; the server is parsing, tokenising and chunking.
    Processing {
        files: usize,
    },
    Done(UploadReport),
    Failed(String),
}

#[component]
pub fn UploadZone(project_id: i64, limits: UploadLimits, #[prop(into)] on_done: Callback<()>) -> impl IntoView {
    let phase = RwSignal::new(Phase::Idle);
    let dragging = RwSignal::new(false);
    let busy = move || matches!(phase.get(), Phase::Sending { .. } | Phase::Processing { .. });

    #[cfg(feature = "hydrate")]
    let start = move |files: web_sys::FileList| client::start(project_id, limits, files, phase, on_done);
    #[cfg(not(feature = "hydrate"))]
    let start = move |_files: ()| {
        let _ = (project_id, limits, on_done);
    };

    let on_drop = move |ev: leptos::ev::DragEvent| {
        ev.prevent_default();
        dragging.set(false);
        #[cfg(feature = "hydrate")]
        if let Some(files) = ev.data_transfer().and_then(|dt| dt.files()) {
            start(files);
        }
        #[cfg(not(feature = "hydrate"))]
        start(());
    };
    let on_pick = move |ev: leptos::ev::Event| {
        #[cfg(feature = "hydrate")]
        {
            use wasm_bindgen::JsCast;
            let input: web_sys::HtmlInputElement = ev.target().unwrap().unchecked_into();
            if let Some(files) = input.files() {
                start(files);
            }
            input.set_value("");
        }
        #[cfg(not(feature = "hydrate"))]
        {
            let _ = ev;
            start(());
        }
    };

    view! {
        <section class="upload">
            <div
                class="dropzone"
                class:dragging=move || dragging.get()
                class:busy=busy
                on:dragover=move |ev: leptos::ev::DragEvent| { ev.prevent_default(); dragging.set(true); }
                on:dragleave=move |_| dragging.set(false)
                on:drop=on_drop
            >
                <p class="drop-title">"Drop files here"</p>
                <p class="muted">
                    ".txt, .md, .jsonl (UltraDomain: one object per line with a \"context\"), .json, or a .zip of these · up to "
                    {format::bytes(limits.max_upload_bytes)} " per upload"
                </p>
                <label class="button">
                    "Choose files…"
                    <input id="upload-input" type="file" multiple accept=".txt,.md,.jsonl,.json,.zip" on:change=on_pick disabled=busy/>
                </label>
            </div>
            {move || match phase.get() {
                Phase::Idle => ().into_any(),
                Phase::Sending { loaded, total, files } => {
                    let pct = if total > 0.0 { (loaded / total * 100.0).round() } else { 0.0 };
                    view! {
                        <div class="progress-line">
                            <progress max="100" value=pct></progress>
                            <span>{format!("Uploading {files} file{}: {pct:.0}% of {}", plural(files), format::bytes(total as u64))}</span>
                        </div>
                    }.into_any()
                }
                Phase::Processing { files } => view! {
                    <div class="progress-line">
                        <progress></progress>
                        <span>{format!("Reading, tokenising and chunking {files} file{}…", plural(files))}</span>
                    </div>
                }.into_any(),
                Phase::Failed(message) => view! { <p class="error" role="alert">{message}</p> }.into_any(),
                Phase::Done(report) => view! { <Report report/> }.into_any(),
            }}
        </section>
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[component]
fn Report(report: UploadReport) -> impl IntoView {
    let added = match report.added {
        0 => "No documents added.".to_string(),
        1 => "Added 1 document.".to_string(),
        n => format!("Added {} documents.", format::int(n)),
    };
    let skipped = report.skipped.clone();
    view! {
        <div class="report" role="status">
            <p class:ok={report.added > 0}>{added}</p>
            {(!skipped.is_empty()).then(|| view! {
                <p>{format!("Rejection {}:", skipped.len())}</p>
                <ul class="skipped">
                    {skipped.into_iter().map(|Rejection { file, reason }| view! {
                        <li><strong>{file}</strong>": "{reason}</li>
                    }).collect_view()}
                </ul>
            })}
        </div>
    }
}

#[cfg(feature = "hydrate")]
mod client {
    use super::*;
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::JsCast;
    use web_sys::{FileList, FormData, ProgressEvent, XmlHttpRequest};

    pub(super) fn start(
        project_id: i64,
        limits: UploadLimits,
        files: FileList,
        phase: RwSignal<Phase>,
        on_done: Callback<()>,
    ) {
        let mut chosen = Vec::new();
        let mut refused = Vec::new();
        for i in 0..files.length() {
            let Some(file) = files.get(i) else { continue };
            let size = file.size() as u64;
            if size > limits.max_file_bytes {
                refused.push(Rejection {
                    file: file.name(),
                    reason: format!(
                        "too large: {} exceeds the limit of {}",
                        format::bytes(size),
                        format::bytes(limits.max_file_bytes)
                    ),
                });
            } else {
                chosen.push(file);
            }
        }
        let total: u64 = chosen.iter().map(|f| f.size() as u64).sum();
        if total > limits.max_upload_bytes {
            phase.set(Phase::Failed(format!(
                "These files come to {}, over the limit of {} per upload. Upload them in smaller groups.",
                format::bytes(total),
                format::bytes(limits.max_upload_bytes)
            )));
            return;
        }
        if chosen.is_empty() {
            phase.set(Phase::Done(UploadReport { added: 0, skipped: refused, documents: 0, tokens: 0, chunks: 0 }));
            return;
        }
        if let Err(message) = send(project_id, &chosen, refused, phase, on_done) {
            phase.set(Phase::Failed(message));
        }
    }

    fn send(
        project_id: i64,
        files: &[web_sys::File],
        refused: Vec<Rejection>,
        phase: RwSignal<Phase>,
        on_done: Callback<()>,
    ) -> Result<(), String> {
        let js = |e: wasm_bindgen::JsValue| format!("the browser refused the upload: {e:?}");
        let form = FormData::new().map_err(js)?;
        for f in files {
            form.append_with_blob_and_filename("files", f, &f.name()).map_err(js)?;
        }
        let count = files.len();
        let total: f64 = files.iter().map(|f| f.size()).sum();
        let xhr = XmlHttpRequest::new().map_err(js)?;
        xhr.open("POST", &format!("/api/projects/{project_id}/upload")).map_err(js)?;
        xhr.set_request_header("Accept", "application/json").map_err(js)?;

        let on_progress = Closure::<dyn FnMut(ProgressEvent)>::new(move |e: ProgressEvent| {
            let (loaded, total) = if e.length_computable() { (e.loaded(), e.total()) } else { (e.loaded(), total) };
            if loaded >= total {
                phase.set(Phase::Processing { files: count });
            } else {
                phase.set(Phase::Sending { loaded, total, files: count });
            }
        });
        xhr.upload().map_err(js)?.set_onprogress(Some(on_progress.as_ref().unchecked_ref()));
        on_progress.forget();

        let done_xhr = xhr.clone();
        let on_load = Closure::<dyn FnMut()>::new(move || {
            let status = done_xhr.status().unwrap_or(0);
            let body = done_xhr.response_text().ok().flatten().unwrap_or_default();
            if (200..300).contains(&status) {
                match serde_json::from_str::<UploadReport>(&body) {
                    Ok(mut report) => {
                        report.skipped.splice(0..0, refused.clone());
                        phase.set(Phase::Done(report));
                        on_done.run(());
                    }
                    Err(_) => phase.set(Phase::Failed("The server's answer could not be read.".into())),
                }
            } else {
                let message = serde_json::from_str::<serde_json::Value>(&body)
                    .ok()
                    .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_string))
                    .unwrap_or_else(|| format!("The upload failed (HTTP {status})."));
                phase.set(Phase::Failed(message));
            }
        });
        xhr.set_onload(Some(on_load.as_ref().unchecked_ref()));
        on_load.forget();
        let on_error = Closure::<dyn FnMut()>::new(move || {
            phase.set(Phase::Failed("The upload was interrupted: the server could not be reached.".into()));
        });
        xhr.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        on_error.forget();

        phase.set(Phase::Sending { loaded: 0.0, total, files: count });
        xhr.send_with_opt_form_data(Some(&form)).map_err(js)?;
        Ok(())
    }
}
