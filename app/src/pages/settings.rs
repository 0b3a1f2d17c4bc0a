//! `/projects/:id/settings`: the LLM configuration in use (never the key)
//! and a connection test.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::*;
use crate::components::{ErrorNote, ProjectBar};
use crate::pages::corpus::route_id;

#[component]
pub fn SettingsPage() -> impl IntoView {
    let id = route_id("id");
    let project = Resource::new(move || id.get(), get_project);
    let llm = Resource::new(|| (), |_| get_llm_info());
    let test = ServerAction::<TestConnection>::new();
    view! {
        <Title text="Settings"/>
        <ProjectBar project_id=id.get_untracked() project active="settings"/>
        <main class="page">
            <h1>"Settings"</h1>
            <h2>"LLM provider"</h2>
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match llm.await {
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        Ok(l) => view! {
                            <dl class="settings">
                                <dt>"Provider"</dt><dd id="llm-provider">{l.label.clone()}</dd>
                                <dt>"Base URL"</dt><dd>{if l.base_url.is_empty() { "—".to_string() } else { l.base_url.clone() }}</dd>
                                <dt>"Model"</dt><dd>{l.model.clone()}</dd>
                                <dt>"Concurrency"</dt><dd>{l.concurrency}</dd>
                                <dt>"Timeout"</dt><dd>{format!("{} s", l.timeout_secs)}</dd>
                                <dt>"API key"</dt><dd>{if l.key_set { "set (from the server's environment; never shown)" } else { "not set" }}</dd>
                                <dt>"Price"</dt><dd>{match l.price {
                                    Some((i, o)) => format!("${i} / ${o} per million input / output tokens"),
                                    None if l.provider == "offline" => "free: nothing is sent anywhere".to_string(),
                                    None => "unpriced: calls are counted, cost shows as $0".to_string(),
                                }}</dd>
                            </dl>
                            <p class="muted">
                                "The provider is chosen when the server starts: " <code>"ASSAY_LLM_PROVIDER"</code> " (offline or openai), "
                                <code>"ASSAY_LLM_BASE_URL"</code> ", " <code>"ASSAY_LLM_MODEL"</code> ", " <code>"ASSAY_LLM_CONCURRENCY"</code>
                                ", " <code>"ASSAY_LLM_PRICE"</code> ", and the key in " <code>"ASSAY_LLM_API_KEY"</code> " or " <code>"OPENAI_API_KEY"</code>
                                ". See the README for OpenAI, vLLM and Ollama examples."
                            </p>
                        }.into_any(),
                    }
                })}
            </Suspense>
            <ActionForm action=test attr:class="inline-form">
                <button type="submit" disabled=move || test.pending().get()>
                    {move || if test.pending().get() { "Testing…" } else { "Test connection" }}
                </button>
            </ActionForm>
            {move || test.value().get().map(|r| match r {
                Ok(reply) => view! { <p class="ok-note" role="status">{reply}</p> }.into_any(),
                Err(e) => view! { <ErrorNote error=e/> }.into_any(),
            })}
        </main>
    }
}
