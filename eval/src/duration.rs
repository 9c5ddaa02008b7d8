//! Durations as agent specs write them: `100ms`, `2s`, `1.5s`, `250us`.

use std::time::Duration;

/// Parses a positive duration below a day, such as `100ms`, `2s`, `1.5s` or `250us`.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let (num, scale) = if let Some(n) = text.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = text.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1.0)
    } else {
        return None;
    };
    let v: f64 = num.parse().ok()?;
    (v.is_finite() && v > 0.0 && v * scale < 86_400.0).then(|| Duration::from_secs_f64(v * scale))
}
