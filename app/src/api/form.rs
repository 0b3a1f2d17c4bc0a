//! Reading form fields: numbers within a range, with the reason when not.

#[cfg(feature = "ssr")]
use crate::error::AppError;

/// A whole number from a form field, within `min..=max`, or the reason it is not.
#[cfg(feature = "ssr")]
pub(crate) fn whole(field: &str, value: &str, min: u64, max: u64) -> Result<u64, AppError> {
    value.trim().parse::<u64>().ok().filter(|n| (min..=max).contains(n)).ok_or_else(|| {
        let range = if max == u64::MAX { format!("of at least {min}") } else { format!("from {min} to {max}") };
        AppError::Invalid(format!("{field} must be a whole number {range}, not \"{value}\""))
    })
}

/// A number from a form field within `min..=max`, or the reason it is not.
#[cfg(feature = "ssr")]
pub(crate) fn number(field: &str, value: &str, min: f64, max: f64) -> Result<f64, AppError> {
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && (min..=max).contains(n))
        .ok_or_else(|| AppError::Invalid(format!("{field} must be a number from {min} to {max}, not \"{value}\"")))
}
