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

/// A rate in 0–1 as a whole percentage: `0.756` → `76%`.
pub fn pct(v: f64) -> String {
    format!("{:.0}%", v * 100.0)
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
