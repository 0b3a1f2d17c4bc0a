//! `/projects/:id/settings`: the LLM provider in force, editable, and a
//! connection test. The API key is write-only here: the browser can set or
//! remove it, never read it.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::projects::get_project;
use crate::api::settings::{get_llm_info, SaveLlmSettings, TestConnection};
use crate::components::route_id;
use crate::components::{ActionError, ErrorNote, ProjectBar};
use crate::model::LlmInfo;

#[component]
pub fn SettingsPage() -> impl IntoView {
    let id = route_id("id");
    let project = Resource::new(move || id.get(), get_project);
    let save = ServerAction::<SaveLlmSettings>::new();
    let llm = Resource::new(move || save.version().get(), |_| get_llm_info());
    let test = ServerAction::<TestConnection>::new();
    view! {
        <Title text="Settings"/>
        <ProjectBar project_id=id.get_untracked() project active="settings"/>
        <main class="page">
            <h1>"Settings"</h1>
            <h2>"LLM provider"</h2>
            <p class="muted">
                "Every LLM call in Assay goes through this provider. " <strong>"offline"</strong>
                " uses classical NLP and no model (its results are labelled offline); " <strong>"openai"</strong>
                " is any OpenAI-compatible endpoint: OpenAI, vLLM, Ollama, llama.cpp server, LM Studio. Saved settings apply to this "
                "server at once and after restarts, over the " <code>"ASSAY_LLM_*"</code> " environment it started with."
            </p>
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match llm.await {
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        Ok(l) => view! { <LlmForm l save/> }.into_any(),
                    }
                })}
            </Transition>
            {move || save.value().get().and_then(|r| r.ok()).map(|_| view! { <p class="ok-note" role="status">"Saved."</p> })}
            <ActionError action=save/>
            <h2>"Connection"</h2>
            <ActionForm action=test attr:class="inline-form">
                <button type="submit" disabled=move || test.pending().get()>
                    {move || if test.pending().get() { "Testing…" } else { "Test connection" }}
                </button>
                <span class="muted">"Sends one tiny request (never cached) with the settings in force."</span>
            </ActionForm>
            {move || test.value().get().map(|r| match r {
                Ok(reply) => view! { <p class="ok-note" id="test-result" role="status">{reply}</p> }.into_any(),
                Err(e) => view! { <p class="error" id="test-result" role="alert">{e.to_string()}</p> }.into_any(),
            })}
        </main>
    }
}

#[component]
fn LlmForm(l: LlmInfo, save: ServerAction<SaveLlmSettings>) -> impl IntoView {
    let price = l.price.map(|(i, o)| format!("{i},{o}")).unwrap_or_default();
    let offline = l.provider == "offline";
    let key_note = if l.key_set { "set; never shown. Leave empty to keep it." } else { "not set" };
    view! {
        <p class="llm-line">"In force: " <strong id="llm-provider" class=format!("provider-{}", l.provider)>{l.label.clone()}</strong></p>
        <ActionForm action=save attr:class="settings-form">
            <label>"Provider"
                <select name="provider">
                    <option value="offline" selected=offline>"offline (no LLM)"</option>
                    <option value="openai" selected=!offline>"openai (OpenAI-compatible endpoint)"</option>
                </select>
            </label>
            <label>"Base URL" <input type="text" name="base_url" value=l.base_url.clone() placeholder="https://api.openai.com/v1"/></label>
            <label>"Model" <input type="text" name="model" value=l.model.clone()/></label>
            <label>"Concurrency" <input type="number" name="concurrency" min="1" value=l.concurrency/></label>
            <label>"Timeout (s)" <input type="number" name="timeout_secs" min="1" value=l.timeout_secs/></label>
            <label>"Context window (tokens)" <input type="number" name="context" min="512" value=l.context.map(|c| c.to_string()).unwrap_or_default() placeholder="empty: what the endpoint says, else 8192"/></label>
            <label>"Price (USD per 1M input,output tokens)" <input type="text" name="price" value=price placeholder="e.g. 0.15,0.60; empty: built-in list"/></label>
            <label>"API key" <input type="password" name="api_key" autocomplete="off" placeholder=key_note/></label>
            <label class="check"><input type="checkbox" name="clear_key" value="on"/>" remove the key saved here"</label>
            <label class="check">
                <input type="checkbox" name="allow_private_urls" value="on" checked=l.allow_private_urls/>
                " The HTTP method may call private addresses (loopback, LAN, link-local). Members with edit rights choose its URL: allow only if you trust them."
            </label>
            <div><button type="submit" disabled=move || save.pending().get()>"Save"</button></div>
        </ActionForm>
    }
}
