//! Number and date formatting shared by the pages.

/// `36780` → `36,780`.
pub fn int(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A rate in 0–1 as a whole percentage: `0.756` → `76%` (never `-0%`).
pub fn pct(v: f64) -> String {
    let r = (v * 100.0).round();
    format!("{:.0}%", if r == 0.0 { 0.0 } else { r })
}

/// A rate to a tenth of a percent, as AlpacaEval reports its win rates:
/// `0.5731` → `57.3%`.
pub fn pct1(v: f64) -> String {
    let r = (v * 1000.0).round() / 10.0;
    format!("{:.1}%", if r == 0.0 { 0.0 } else { r })
}

/// A signed number with `decimals` places, never `-0.00`: `0.0375` →
/// `+0.04`, `-0.001` → `0.00`.
pub fn signed(v: f64, decimals: usize) -> String {
    let scale = 10f64.powi(decimals as i32);
    let r = (v * scale).round() / scale;
    if r == 0.0 {
        format!("{:.*}", decimals, 0.0)
    } else {
        format!("{r:+.decimals$}")
    }
}

/// A rate with its interval: `25% [17–33%]`.
pub fn pct_ci(v: f64, (lo, hi): (f64, f64)) -> String {
    format!("{} [{}–{}]", pct(v), pct(lo).trim_end_matches('%'), pct(hi))
}

/// A relative win rate with its interval: `+0.05 [-0.03, +0.12]`.
pub fn signed_ci(v: f64, (lo, hi): (f64, f64)) -> String {
    format!("{} [{}, {}]", signed(v, 2), signed(lo, 2), signed(hi, 2))
}

/// A number written to a CSV: fixed precision (6 decimals, trailing zeros
/// cut), so 0.07500000000000001 is written 0.075 and -0.0 is 0.
pub fn csv_number(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" || s.is_empty() {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// Money in US dollars with cents and thousands separators: `$0.00`,
/// `$1.27`, `$12,345.60`. An amount under a cent (a question's cost on a
/// cheap model) keeps two significant digits, `$0.00042`, rather than
/// reading as nothing; never `-$0.00`.
pub fn usd(v: f64) -> String {
    if !v.is_finite() {
        return "—".to_string();
    }
    // Only a nonzero amount is shown, so the sign is never on `$0.00`.
    let sign = if v < 0.0 { "-" } else { "" };
    let a = v.abs();
    if a > 0.0 && a < 0.005 {
        // Two significant digits: 0.000421 → 0.00042.
        let digits = (-a.log10().floor()) as usize + 1;
        return format!("{sign}${a:.digits$}");
    }
    let cents = (a * 100.0).round() as i64;
    format!("{sign}${}.{:02}", int(cents / 100), cents % 100)
}

/// A stored UTC time for people: `2026-12-01T10:04:12Z` → `1 Dec 2026,
/// 10:04 UTC` (what is not such a time is shown as it is).
pub fn timestamp(iso: &str) -> String {
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let parts = (iso.get(0..4), iso.get(5..7).and_then(|m| m.parse::<usize>().ok()), iso.get(8..10), iso.get(11..16));
    match parts {
        (Some(year), Some(month @ 1..=12), Some(day), Some(time)) if iso.as_bytes().get(4) == Some(&b'-') => {
            format!("{} {} {year}, {time} UTC", day.trim_start_matches('0'), MONTHS[month - 1])
        }
        _ => iso.to_string(),
    }
}

/// A duration for people: `42 s`, `3 min 20 s`, `2 h 05 min`.
pub fn duration(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    if seconds < 1.0 {
        "under a second".to_string()
    } else if s < 60 {
        format!("{s} s")
    } else if s < 3600 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{} h {:02} min", s / 3600, (s % 3600) / 60)
    }
}

/// A count with its noun: `1 pair`, `2 pairs`, `1,200 questions` (the
/// plural is the noun with an `s`).
pub fn count(n: i64, noun: &str) -> String {
    format!("{} {noun}{}", int(n), if n == 1 { "" } else { "s" })
}

/// How fast items are finishing, in the unit a person reads easily: a
/// slow model's "42 s per item" rather than "0.0/s", a fast one's "12.5
/// items/s"; "—" before any item finished.
pub fn pace(items: u64, seconds: f64) -> String {
    if items == 0 || seconds <= 0.0 {
        return "—".to_string();
    }
    let per_item = seconds / items as f64;
    if per_item >= 120.0 {
        format!("{:.1} min per item", per_item / 60.0)
    } else if per_item >= 1.0 {
        format!("{per_item:.1} s per item")
    } else {
        format!("{:.1} items/s", items as f64 / seconds)
    }
}

/// Bytes for people: `1.5 MB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["bytes", "KB", "MB", "GB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} bytes")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn pace_reads_in_seconds_per_item_when_slow() {
        use super::pace;
        assert_eq!(pace(0, 10.0), "—");
        assert_eq!(pace(3, 126.0), "42.0 s per item");
        assert_eq!(pace(2, 600.0), "5.0 min per item");
        assert_eq!(pace(50, 4.0), "12.5 items/s");
    }

    #[test]
    fn counts_agree_with_their_number() {
        assert_eq!(super::count(1, "pair"), "1 pair");
        assert_eq!(super::count(0, "pair"), "0 pairs");
        assert_eq!(super::count(1200, "question"), "1,200 questions");
    }

    #[test]
    fn thousands() {
        assert_eq!(super::int(0), "0");
        assert_eq!(super::int(999), "999");
        assert_eq!(super::int(36780), "36,780");
        assert_eq!(super::int(-1234567), "-1,234,567");
    }

    #[test]
    fn durations() {
        use super::duration;
        assert_eq!(duration(0.2), "under a second");
        assert_eq!(duration(42.4), "42 s");
        assert_eq!(duration(200.0), "3 min 20 s");
        assert_eq!(duration(7500.0), "2 h 05 min");
    }

    #[test]
    fn money_has_cents() {
        use super::usd;
        assert_eq!(usd(0.0), "$0.00");
        assert_eq!(usd(-0.0), "$0.00");
        assert_eq!(usd(1.2749), "$1.27");
        assert_eq!(usd(0.005), "$0.01");
        assert_eq!(usd(12345.6), "$12,345.60");
        assert_eq!(usd(0.000421), "$0.00042");
        assert_eq!(usd(0.0042), "$0.0042");
        assert_eq!(usd(-0.001), "-$0.0010");
        assert_eq!(usd(-2.5), "-$2.50");
    }

    #[test]
    fn timestamps_and_sizes() {
        assert_eq!(super::timestamp("2026-11-29T23:40:12Z"), "29 Nov 2026, 23:40 UTC");
        assert_eq!(super::timestamp("2026-12-01T10:04:59.123Z"), "1 Dec 2026, 10:04 UTC");
        assert_eq!(super::timestamp("2026-12-01 10:04:59"), "1 Dec 2026, 10:04 UTC");
        assert_eq!(super::timestamp("soon"), "soon");
        assert_eq!(super::bytes(200 * 1024 * 1024), "200.0 MB");
        assert_eq!(super::bytes(13), "13 bytes");
    }
}

/// `s` percent-encoded for a URL's query string (RFC 3986's unreserved
/// characters kept).
pub fn query_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Hard-wrapped text (a Project Gutenberg book's 70-character lines) for
/// a pane that wraps on its own: a lone line break becomes a space, blank
/// lines (paragraphs) stay; over `segments` (text, marked) as one text, so
/// a paragraph break split between two segments stays one.
pub fn soft_wrap(segments: Vec<(String, bool)>) -> Vec<(String, bool)> {
    let whole: Vec<char> = segments.iter().flat_map(|(t, _)| t.chars()).collect();
    let lone = |i: usize| {
        let breaks = |c: char| c == '\n' || c == '\r';
        breaks(whole[i]) && !(i > 0 && breaks(whole[i - 1])) && !whole.get(i + 1).is_some_and(|c| breaks(*c))
    };
    let mut at = 0;
    segments
        .into_iter()
        .map(|(text, mark)| {
            let out: String = text
                .chars()
                .map(|c| {
                    let soft = lone(at);
                    at += 1;
                    if soft {
                        ' '
                    } else {
                        c
                    }
                })
                .collect();
            (out, mark)
        })
        .collect()
}

#[cfg(test)]
mod soft_wrap_tests {
    #[test]
    fn lone_breaks_become_spaces_and_paragraphs_stay() {
        let got = super::soft_wrap(vec![
            ("It was a dark\nand stormy ".into(), false),
            ("night".into(), true),
            (".\n".into(), false),
            ("\nThe end\r\nof it.".into(), false),
        ]);
        let text: String = got.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(text, "It was a dark and stormy night.\n\nThe end\r\nof it.");
        assert_eq!(got[1], ("night".to_string(), true));
    }
}
