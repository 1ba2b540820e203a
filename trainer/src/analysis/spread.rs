//! The spread of repeated runs: their mean and sample standard deviation, and how a table
//! writes them. One rule for the experiment report and the data ladder: a single run has a
//! mean but no standard deviation (not 0, which would claim runs that agree).

/// The mean of `values` and their sample standard deviation (`None` for fewer than two).
pub fn mean_sd(values: &[f64]) -> (f64, Option<f64>) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 {
        return (mean, None);
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, Some(var.sqrt()))
}

/// `mean ± sd` with six decimals, or the mean alone where there is no spread (a single run).
pub fn label(mean: f64, sd: Option<f64>) -> String {
    match sd {
        Some(sd) => format!("{mean:.6} ± {sd:.6}"),
        None => format!("{mean:.6}"),
    }
}

/// [`label`] of [`mean_sd`] of `values`.
pub fn mean_sd_label(values: &[f64]) -> String {
    let (mean, sd) = mean_sd(values);
    label(mean, sd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_run_has_no_spread() {
        assert_eq!(mean_sd(&[0.5]), (0.5, None));
        let (mean, sd) = mean_sd(&[0.011, 0.009]);
        assert!((mean - 0.01).abs() < 1e-15);
        assert!((sd.unwrap() - (2.0f64 * 0.001f64.powi(2)).sqrt()).abs() < 1e-12);
        assert_eq!(mean_sd_label(&[0.008032]), "0.008032");
        assert_eq!(mean_sd_label(&[0.011, 0.009]), "0.010000 ± 0.001414");
    }
}
