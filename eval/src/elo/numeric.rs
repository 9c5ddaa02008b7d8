//! Numerics of the Elo fit: Cholesky factorization, solve and inverse, and the normal CDF.

/// Cholesky factor `L` (lower triangular, `A = L Lᵀ`) of a symmetric positive-definite matrix,
/// or `None` if the matrix is not (numerically) positive definite.
#[allow(clippy::needless_range_loop)] // index-heavy linear algebra reads best with indices
pub(super) fn cholesky(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut l = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let mut s = a[i][j];
            for k in 0..j {
                s -= l[i][k] * l[j][k];
            }
            if i == j {
                if s.is_nan() || s <= 0.0 || s.is_infinite() {
                    return None;
                }
                l[i][i] = s.sqrt();
            } else {
                l[i][j] = s / l[j][j];
            }
        }
    }
    Some(l)
}

/// Solves `L Lᵀ x = b`.
pub(super) fn cholesky_solve(l: &[Vec<f64>], b: &[f64]) -> Vec<f64> {
    let n = l.len();
    let mut y = b.to_vec();
    for i in 0..n {
        let mut s = y[i];
        for k in 0..i {
            s -= l[i][k] * y[k];
        }
        y[i] = s / l[i][i];
    }
    for i in (0..n).rev() {
        let mut s = y[i];
        for k in i + 1..n {
            s -= l[k][i] * y[k];
        }
        y[i] = s / l[i][i];
    }
    y
}

/// Inverse of a symmetric positive-definite matrix from its Cholesky factor (symmetrized).
#[allow(clippy::needless_range_loop)]
pub(super) fn cholesky_inverse(l: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let n = l.len();
    let mut inv = vec![vec![0.0; n]; n];
    let mut e = vec![0.0; n];
    for c in 0..n {
        e.iter_mut().for_each(|x| *x = 0.0);
        e[c] = 1.0;
        let col = cholesky_solve(l, &e);
        for (r, v) in col.into_iter().enumerate() {
            inv[r][c] = v;
        }
    }
    for i in 0..n {
        for j in 0..i {
            let avg = 0.5 * (inv[i][j] + inv[j][i]);
            inv[i][j] = avg;
            inv[j][i] = avg;
        }
    }
    inv
}

/// The error function for `x >= 0`, by its everywhere-convergent series of positive terms
/// `erf(x) = 2/√π · e^{-x²} · Σ 2ⁿ x^{2n+1} / (1·3·…·(2n+1))` (no cancellation).
pub(super) fn erf_series(x: f64) -> f64 {
    let mut term = x;
    let mut sum = x;
    let x2 = x * x;
    for n in 1..400 {
        term *= 2.0 * x2 / (2 * n + 1) as f64;
        sum += term;
        if term < 1e-17 * sum {
            break;
        }
    }
    2.0 / std::f64::consts::PI.sqrt() * (-x2).exp() * sum
}

/// The complementary error function for `x >= 2.5`, by its continued fraction
/// `erfc(x) = e^{-x²}/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …))))`, evaluated backwards.
pub(super) fn erfc_continued_fraction(x: f64) -> f64 {
    let mut f = x;
    for k in (1..=80).rev() {
        f = x + (k as f64 / 2.0) / f;
    }
    (-x * x).exp() / (std::f64::consts::PI.sqrt() * f)
}

/// The complementary error function, accurate to about 1e-15 relative.
pub(super) fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < 2.5 { 1.0 - erf_series(x) } else { erfc_continued_fraction(x) }
}

/// The standard normal cumulative distribution function Φ.
pub(super) fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}
