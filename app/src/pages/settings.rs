//! `/settings`: the LLM provider in force for the whole server, editable,
//! and a connection test. The API key is write-only here: the browser can
//! set or remove it, never read it. (`/projects/:id/settings`, where it
//! used to live, shows the same page.)

use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::settings::{get_llm_info, SaveLlmSettings, TestConnection};
use crate::components::{ActionError, Brand, ErrorNote};
use crate::model::LlmInfo;

#[component]
pub fn SettingsPage() -> impl IntoView {
    let save = ServerAction::<SaveLlmSettings>::new();
    let llm = Resource::new(move || save.version().get(), |_| get_llm_info());
    let test = ServerAction::<TestConnection>::new();
    view! {
        <Title text="Settings"/>
        <Brand account=true/>
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
                        Ok(l) => view! { <LlmForm l save test/> }.into_any(),
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
fn LlmForm(l: LlmInfo, save: ServerAction<SaveLlmSettings>, test: ServerAction<TestConnection>) -> impl IntoView {
    let price = l.price.map(|p| p.spec()).unwrap_or_default();
    let offline = l.provider == types::ProviderKind::Offline;
    let key_note = if l.key_set { "set; never shown. Leave empty to keep it." } else { "not set" };
    // Saving `openai` with no key warns once first: OpenAI refuses requests
    // without one (a local server may not need it, so it is not refused).
    let provider = RwSignal::new(l.provider.as_str().to_string());
    let key = RwSignal::new(String::new());
    let clear = RwSignal::new(false);
    let warned = RwSignal::new(false);
    let key_set = l.key_set;
    let keyless = move || provider.get() == "openai" && key.get().trim().is_empty() && (!key_set || clear.get());
    // A connection test's result was for the settings it ran with: a new
    // choice of provider, or a save, makes it stale.
    Effect::new(move |_| {
        provider.track();
        save.version().track();
        test.value().set(None);
    });
    view! {
        <p class="llm-line">"In force: " <strong id="llm-provider" class=format!("provider-{}", l.provider)>{l.label.clone()}</strong></p>
        <ActionForm action=save attr:class="settings-form">
            <label>"Provider"
                <select name="provider" on:change=move |ev| { provider.set(event_target_value(&ev)); warned.set(false); }>
                    <option value="offline" selected=offline>"offline (no LLM)"</option>
                    <option value="openai" selected=!offline>"openai (OpenAI-compatible endpoint)"</option>
                </select>
            </label>
            <label>"Base URL" <input type="text" name="base_url" value=l.base_url.clone() placeholder="https://api.openai.com/v1"/></label>
            <label>"Model" <input type="text" name="model" value=l.model.clone()/></label>
            <label>"Concurrency" <input type="number" name="concurrency" min="1" value=l.concurrency/></label>
            <label>"Timeout (s)" <input type="number" name="timeout_secs" min="1" value=l.timeout_secs/></label>
            <label>"Context window (tokens)" <input type="number" name="context" min="512" value=l.context.map(|c| c.to_string()).unwrap_or_default() placeholder="empty: what the endpoint says, else 8192"/></label>
            <label>"Price (USD per 1M input,output[,cached input] tokens)" <input type="text" name="price" value=price placeholder="e.g. 0.15,0.60,0.075; empty: built-in list"/></label>
            <label>"API key" <input type="password" name="api_key" autocomplete="off" placeholder=key_note
                on:input=move |ev| { key.set(event_target_value(&ev)); warned.set(false); }/></label>
            <label class="check"><input type="checkbox" name="clear_key" value="on"
                on:change=move |ev| { clear.set(event_target_checked(&ev)); warned.set(false); }/>" remove the key saved here"</label>
            <label class="check">
                <input type="checkbox" name="allow_private_urls" value="on" checked=l.allow_private_urls/>
                " The HTTP method may call private addresses (loopback, LAN, link-local). Members with edit rights choose its URL: allow only if you trust them."
            </label>
            {move || (warned.get() && keyless()).then(|| view! {
                <p class="notice" id="no-key-warning" role="alert">"No API key: OpenAI's own endpoint refuses requests without one. A local server (vLLM, Ollama, llama.cpp) may need none — if so, save again."</p>
            })}
            <div><button type="submit" id="save-llm" disabled=move || save.pending().get()
                on:click=move |ev| {
                    if keyless() && !warned.get_untracked() {
                        ev.prevent_default();
                        warned.set(true);
                    }
                }>{move || if warned.get() && keyless() { "Save without a key" } else { "Save" }}</button></div>
        </ActionForm>
    }
}
