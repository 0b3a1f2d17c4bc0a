//! Concurrency that follows the provider's rate-limit headers.
//!
//! OpenAI (and vLLM's, Azure's, Together's and others' gateways) say with
//! every reply how much of the current window is left:
//! `x-ratelimit-remaining-requests` / `-tokens`, when each resets
//! (`x-ratelimit-reset-requests: 6m0s`, `…-tokens: 20ms`) and the window's
//! limit (`x-ratelimit-limit-requests`). The [`RateGate`] admits a request
//! only while what was last said left, less what is in flight since, covers
//! it; past that, requests wait for the window to reset (or for a reply
//! that says more is left). A `429` with `Retry-After` pauses every
//! request, not only the one refused.
//!
//! Until the first reply has been read, one request goes at a time (the
//! budget is unknown); an endpoint whose replies carry no such headers
//! (llama.cpp, Ollama) is then limited by the configured concurrency
//! alone. The gate never admits more than that: it sits behind the
//! provider's semaphore and before the deployment's shared slots.

use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// What one reply's headers said.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Reading {
    pub remaining_requests: Option<u64>,
    pub remaining_tokens: Option<u64>,
    pub limit_requests: Option<u64>,
    pub limit_tokens: Option<u64>,
    pub reset_requests: Option<Duration>,
    pub reset_tokens: Option<Duration>,
    /// A `Retry-After` (sent with 429s): nothing goes before it.
    pub retry_after: Option<Duration>,
}

impl Reading {
    /// The rate-limit headers of a reply (`None`: it has none).
    pub fn of(headers: &reqwest::header::HeaderMap) -> Option<Reading> {
        let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
        let number = |name: &str| text(name).and_then(|v| v.parse::<u64>().ok());
        let span = |name: &str| text(name).and_then(parse_span);
        let r = Reading {
            remaining_requests: number("x-ratelimit-remaining-requests"),
            remaining_tokens: number("x-ratelimit-remaining-tokens"),
            limit_requests: number("x-ratelimit-limit-requests"),
            limit_tokens: number("x-ratelimit-limit-tokens"),
            reset_requests: span("x-ratelimit-reset-requests"),
            reset_tokens: span("x-ratelimit-reset-tokens"),
            retry_after: retry_after(headers),
        };
        (r != Reading::default()).then_some(r)
    }
}

/// A `Retry-After` in seconds (fractions allowed).
pub fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    headers
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

/// OpenAI's reset spans: `1s`, `6m0s`, `20ms`, `1h2m3.5s`; a bare number
/// is seconds.
pub fn parse_span(text: &str) -> Option<Duration> {
    if let Ok(s) = text.parse::<f64>() {
        return (s.is_finite() && s >= 0.0).then(|| Duration::from_secs_f64(s));
    }
    let mut total = 0.0;
    let mut rest = text;
    while !rest.is_empty() {
        let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let value: f64 = rest[..end].parse().ok()?;
        rest = &rest[end..];
        let unit_end = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let seconds = match &rest[..unit_end] {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        rest = &rest[unit_end..];
        total += value * seconds;
    }
    (total.is_finite()).then(|| Duration::from_secs_f64(total))
}

/// One budget (requests, or tokens) as last said.
#[derive(Debug, Clone, Copy, Default)]
struct Budget {
    /// Left for requests not yet sent (`None`: never said).
    left: Option<u64>,
    /// The window's limit: what is left once it resets.
    limit: Option<u64>,
    resets_at: Option<Instant>,
}

impl Budget {
    /// The budget at `now`: a window that has reset is full again (its
    /// limit, if said; else unknown until a reply says).
    fn at(&mut self, now: Instant) {
        if self.resets_at.is_some_and(|r| now >= r) {
            self.left = self.limit;
            self.resets_at = None;
        }
    }

    /// Takes what a reply said, less what is in flight besides it (it may
    /// not have been counted yet). Within one window the smaller figure
    /// holds: replies arrive out of order.
    fn read(&mut self, now: Instant, said: Option<u64>, limit: Option<u64>, reset: Option<Duration>, others: u64) {
        let Some(said) = said else { return };
        let left = said.saturating_sub(others);
        // A margin for the provider's rounding and the reply's time on the wire.
        let resets_at = reset.map(|r| now + r + r / 100 + Duration::from_millis(10));
        let same_window = match (self.resets_at, resets_at) {
            // Two readings of one window differ by the replies' spacing.
            (Some(a), Some(b)) => b <= a + Duration::from_millis(50),
            _ => false,
        };
        self.left = Some(if same_window { self.left.map_or(left, |l| l.min(left)) } else { left });
        if limit.is_some() {
            self.limit = limit;
        }
        if !same_window {
            self.resets_at = resets_at.or(self.resets_at);
        }
    }

    fn covers(&self, n: u64) -> bool {
        self.left.is_none_or(|l| l >= n)
    }

    fn take(&mut self, n: u64) {
        if let Some(l) = &mut self.left {
            *l = l.saturating_sub(n);
        }
    }
}

#[derive(Debug, Default)]
struct State {
    /// A reply has been read (with headers or without).
    read_one: bool,
    /// Replies carry no rate-limit headers: only the semaphore limits.
    unlimited: bool,
    requests: Budget,
    tokens: Budget,
    in_flight: u64,
    paused_until: Option<Instant>,
    /// Requests that waited for the budget, and for how long in all.
    held: u64,
    held_for: Duration,
}

/// What the gate has done (for the job page and the benchmarks).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GateStats {
    /// Requests that had to wait for the provider's budget.
    pub held: u64,
    pub held_for: Duration,
    /// What the last reply said was left.
    pub remaining_requests: Option<u64>,
    pub remaining_tokens: Option<u64>,
}

/// See the module docs.
#[derive(Debug, Default)]
pub struct RateGate {
    state: Mutex<State>,
    changed: Notify,
}

/// A request admitted: in flight until dropped.
pub struct Admitted<'a> {
    gate: &'a RateGate,
}

impl Drop for Admitted<'_> {
    fn drop(&mut self) {
        let mut s = self.gate.state.lock().unwrap_or_else(|e| e.into_inner());
        s.in_flight = s.in_flight.saturating_sub(1);
        drop(s);
        self.gate.changed.notify_waiters();
    }
}

impl RateGate {
    /// Waits until a request of about `tokens` tokens (prompt and reply)
    /// fits what the provider said is left.
    pub async fn admit(&self, tokens: u64) -> Admitted<'_> {
        let mut waited: Option<Instant> = None;
        loop {
            // Registered before the state is read: a change between the
            // two still wakes this request.
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let wake = {
                let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
                let now = Instant::now();
                s.requests.at(now);
                s.tokens.at(now);
                let paused = s.paused_until.filter(|p| now < *p);
                let ok = paused.is_none()
                    && if s.unlimited {
                        true
                    } else if !s.read_one {
                        // The budget is unknown: one request finds it out.
                        s.in_flight == 0
                    } else {
                        // A request larger than a whole window's tokens goes alone
                        // into a full window (the provider then says what it says).
                        let full = s.tokens.left.is_some() && s.tokens.left == s.tokens.limit;
                        s.requests.covers(1) && (s.tokens.covers(tokens) || s.in_flight == 0 && full)
                    };
                if ok {
                    s.requests.take(1);
                    s.tokens.take(tokens);
                    s.in_flight += 1;
                    if let Some(since) = waited {
                        s.held += 1;
                        s.held_for += since.elapsed();
                    }
                    return Admitted { gate: self };
                }
                waited.get_or_insert(now);
                // The soonest moment the answer may change without a reply.
                paused.or(s.requests.resets_at).into_iter().chain(s.tokens.resets_at).min()
            };
            match wake {
                Some(at) => {
                    tokio::select! {
                        _ = tokio::time::sleep_until(at) => {}
                        _ = &mut changed => {}
                    }
                }
                None => changed.await,
            }
        }
    }

    /// Takes what a reply said (`None`: its headers said nothing of limits).
    pub fn read(&self, reading: Option<Reading>) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let first = !s.read_one;
        s.read_one = true;
        match reading {
            None => {
                if first {
                    s.unlimited = true;
                }
            }
            Some(r) => {
                s.unlimited = false;
                // This reply's own request is still counted in flight.
                let others = s.in_flight.saturating_sub(1);
                s.requests.read(now, r.remaining_requests, r.limit_requests, r.reset_requests, others);
                s.tokens.read(now, r.remaining_tokens, r.limit_tokens, r.reset_tokens, 0);
                if let Some(wait) = r.retry_after {
                    let until = now + wait;
                    s.paused_until = Some(s.paused_until.map_or(until, |p| p.max(until)));
                }
            }
        }
        drop(s);
        self.changed.notify_waiters();
    }

    pub fn stats(&self) -> GateStats {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        GateStats {
            held: s.held,
            held_for: s.held_for,
            remaining_requests: s.requests.left,
            remaining_tokens: s.tokens.left,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reset_spans_read_as_openai_writes_them() {
        let ms = |t: &str| parse_span(t).map(|d| d.as_millis());
        assert_eq!(ms("1s"), Some(1000));
        assert_eq!(ms("6m0s"), Some(360_000));
        assert_eq!(ms("20ms"), Some(20));
        assert_eq!(ms("1h2m3.5s"), Some(3_723_500));
        assert_eq!(ms("0.25"), Some(250));
        assert_eq!(ms("soon"), None);
        assert_eq!(ms("5x"), None);
    }

    #[tokio::test(start_paused = true)]
    async fn one_request_finds_the_budget_then_no_more_than_it_go() {
        let gate = RateGate::default();
        let first = gate.admit(10).await;
        // The budget is unknown: a second waits for the first's reply.
        let second = tokio::time::timeout(Duration::from_millis(10), gate.admit(10)).await;
        assert!(second.is_err());
        gate.read(Some(Reading {
            remaining_requests: Some(2),
            limit_requests: Some(3),
            reset_requests: Some(Duration::from_secs(1)),
            ..Default::default()
        }));
        drop(first);
        let a = gate.admit(10).await;
        let b = gate.admit(10).await;
        let started = Instant::now();
        // The third waits for the window to reset, then the limit is left.
        let c = gate.admit(10).await;
        assert!(started.elapsed() >= Duration::from_millis(990), "{:?}", started.elapsed());
        assert_eq!(gate.stats().remaining_requests, Some(2));
        assert_eq!(gate.stats().held, 1);
        drop((a, b, c));
    }

    #[tokio::test(start_paused = true)]
    async fn replies_without_headers_leave_the_semaphore_alone_to_limit() {
        let gate = RateGate::default();
        drop(gate.admit(1).await);
        gate.read(None);
        let held: Vec<_> = futures_util::future::join_all((0..50).map(|_| gate.admit(1))).await;
        assert_eq!(held.len(), 50);
    }

    #[tokio::test(start_paused = true)]
    async fn a_retry_after_pauses_every_request() {
        let gate = RateGate::default();
        drop(gate.admit(1).await);
        gate.read(None);
        gate.read(Some(Reading { retry_after: Some(Duration::from_secs(2)), ..Default::default() }));
        let started = Instant::now();
        drop(gate.admit(1).await);
        assert!(started.elapsed() >= Duration::from_secs(2));
    }
}
