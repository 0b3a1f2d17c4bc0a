//! `/share/:token`: a report page shared read-only by link — an
//! evaluation's report or a study's results, with no account, no edit
//! controls and nothing else of the project. A withdrawn link is a 404.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

use crate::api::get_shared;
use crate::components::ErrorNote;

#[component]
pub fn SharePage() -> impl IntoView {
    let params = use_params_map();
    let token = Memo::new(move |_| params.read().get("token").unwrap_or_default());
    let shared = Resource::new(move || token.get(), get_shared);
    view! {
        <Title text="Shared report"/>
        <header class="topbar"><span class="brand">"Assay"</span><span class="muted small">"a report shared read-only"</span></header>
        <main class="page wide evaluation-report" id="shared">
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    let t = token.get_untracked();
                    match shared.await {
                        Err(e) => {
                            #[cfg(feature = "ssr")]
                            if let Some(resp) = use_context::<leptos_axum::ResponseOptions>() {
                                resp.set_status(axum::http::StatusCode::NOT_FOUND);
                            }
                            view! { <h1>"Not found"</h1><ErrorNote error=e/> }.into_any()
                        }
                        Ok(v) => match (v.evaluation, v.study) {
                            (Some(r), _) => view! { <crate::pages::evaluations::Report project_id=0 r share=t/> }.into_any(),
                            (_, Some(r)) => view! { <crate::pages::studies::Results r share=t/> }.into_any(),
                            _ => ().into_any(),
                        },
                    }
                })}
            </Suspense>
        </main>
    }
}
