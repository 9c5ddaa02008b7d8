//! Dirichlet and Gumbel noise from the environment's seeded generator.

use morris_env::Rng;

/// A standard normal sample (Box–Muller).
fn normal(rng: &mut Rng) -> f64 {
    let u1 = (rng.next_f64()).max(f64::MIN_POSITIVE);
    let u2 = rng.next_f64();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// A Gamma(`alpha`, 1) sample (Marsaglia and Tsang, 2000; boosted for `alpha < 1`).
fn gamma(rng: &mut Rng, alpha: f64) -> f64 {
    if alpha < 1.0 {
        let u = rng.next_f64().max(f64::MIN_POSITIVE);
        return gamma(rng, alpha + 1.0) * u.powf(1.0 / alpha);
    }
    let d = alpha - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = rng.next_f64().max(f64::MIN_POSITIVE);
        if u < 1.0 - 0.0331 * x.powi(4) || u.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
            return d * v;
        }
    }
}

/// A sample from the symmetric Dirichlet(`alpha`) distribution over `n` outcomes.
pub(super) fn dirichlet(rng: &mut Rng, alpha: f32, n: usize) -> Vec<f32> {
    let g: Vec<f64> = (0..n).map(|_| gamma(rng, alpha as f64)).collect();
    let total: f64 = g.iter().sum();
    if total > 0.0 { g.iter().map(|x| (x / total) as f32).collect() } else { vec![1.0 / n as f32; n] }
}

/// A standard Gumbel sample.
pub(super) fn gumbel(rng: &mut Rng) -> f32 {
    let u = rng.next_f64().clamp(1e-12, 1.0 - 1e-12);
    (-(-u.ln()).ln()) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dirichlet_sums_to_one_with_the_right_mean() {
        let mut rng = Rng::seed_from_u64(3);
        let mut mean = [0.0f64; 4];
        for _ in 0..4000 {
            let d = dirichlet(&mut rng, 0.3, 4);
            assert!((d.iter().sum::<f32>() - 1.0).abs() < 1e-4);
            for (m, x) in mean.iter_mut().zip(&d) {
                *m += *x as f64 / 4000.0;
            }
        }
        for m in mean {
            assert!((m - 0.25).abs() < 0.03, "{m}");
        }
    }

    #[test]
    fn gamma_has_mean_alpha() {
        let mut rng = Rng::seed_from_u64(5);
        for alpha in [0.3, 1.0, 2.5] {
            let m: f64 = (0..20_000).map(|_| gamma(&mut rng, alpha)).sum::<f64>() / 20_000.0;
            assert!((m - alpha).abs() < 0.05 * alpha.max(1.0), "alpha {alpha}: mean {m}");
        }
    }
}
