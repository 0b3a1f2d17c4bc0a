//! The `offline` provider with every stage's classical-NLP implementation:
//! the one place that knows all the stages' tasks. Each stage registers its
//! own (`register_offline` beside its prompts); the LLM layer
//! ([`crate::llm::offline`]) names none of them.

use crate::llm::offline::OfflineProvider;

/// An offline provider that answers every task of every stage.
pub fn provider() -> OfflineProvider {
    let mut p = OfflineProvider::new();
    crate::graph::register_offline(&mut p);
    crate::questions::register_offline(&mut p);
    crate::rag::register_offline(&mut p);
    crate::judge::register_offline(&mut p);
    crate::study::register_offline(&mut p);
    p
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_stage_registers_its_tasks() {
        let purposes = super::provider().purposes().into_iter().map(str::to_string).collect::<Vec<_>>();
        for p in [
            "ping",
            crate::graph::summarise::PURPOSE,
            crate::graph::extract::PURPOSE,
            crate::graph::describe::PURPOSE,
            crate::questions::summary::PURPOSE,
            crate::rag::answer::PURPOSE,
            crate::judge::scoring::PURPOSE,
            crate::study::rate::PURPOSE,
        ] {
            assert!(purposes.iter().any(|q| q == p), "{p} missing from {purposes:?}");
        }
        assert_eq!(purposes.len(), 21, "{purposes:?}");
    }
}
