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

/// `2026-11-29T23:40:12Z` → `2026-11-29 23:40 UTC`.
pub fn timestamp(iso: &str) -> String {
    match (iso.get(..10), iso.get(11..16)) {
        (Some(date), Some(time)) => format!("{date} {time} UTC"),
        _ => iso.to_string(),
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
    fn thousands() {
        assert_eq!(super::int(0), "0");
        assert_eq!(super::int(999), "999");
        assert_eq!(super::int(36780), "36,780");
        assert_eq!(super::int(-1234567), "-1,234,567");
    }

    #[test]
    fn timestamps_and_sizes() {
        assert_eq!(super::timestamp("2026-11-29T23:40:12Z"), "2026-11-29 23:40 UTC");
        assert_eq!(super::bytes(200 * 1024 * 1024), "200.0 MB");
        assert_eq!(super::bytes(13), "13 bytes");
    }
}
