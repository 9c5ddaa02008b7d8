//! Root noise from the tree's seeded generator: Dirichlet (through `rand_distr`'s Gamma sampler)
//! for PUCT roots and standard Gumbel samples for Gumbel roots.

use morris_env::Rng;
use rand_distr::{Distribution, Gamma, Gumbel};

/// A sample from the symmetric Dirichlet(`alpha`) distribution over `n` outcomes: `n`
/// Gamma(`alpha`, 1) samples, normalized. A non-positive `alpha` (rejected by config
/// validation) or an all-zero draw gives the uniform distribution.
pub(super) fn dirichlet(rng: &mut Rng, alpha: f32, n: usize) -> Vec<f32> {
    let Ok(gamma) = Gamma::new(f64::from(alpha), 1.0) else { return vec![1.0 / n as f32; n] };
    let g: Vec<f64> = (0..n).map(|_| gamma.sample(rng)).collect();
    let total: f64 = g.iter().sum();
    if total > 0.0 { g.iter().map(|x| (x / total) as f32).collect() } else { vec![1.0 / n as f32; n] }
}

/// A standard Gumbel sample (location 0, scale 1).
pub(super) fn gumbel(rng: &mut Rng) -> f32 {
    // Location 0 and scale 1 are valid parameters, so `new` cannot fail here.
    Gumbel::new(0.0f64, 1.0).map_or(0.0, |g| g.sample(rng) as f32)
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
        // Small alpha concentrates the mass: the largest share is usually most of it.
        let big: f64 = (0..2000)
            .map(|_| dirichlet(&mut rng, 0.03, 8).iter().fold(0.0f32, |a, &b| a.max(b)) as f64)
            .sum::<f64>()
            / 2000.0;
        assert!(big > 0.8, "{big}");
        assert_eq!(dirichlet(&mut rng, 0.0, 4), vec![0.25; 4]);
    }

    #[test]
    fn gumbel_has_the_euler_mascheroni_mean_and_pi_squared_over_six_variance() {
        let mut rng = Rng::seed_from_u64(5);
        let xs: Vec<f64> = (0..40_000).map(|_| gumbel(&mut rng) as f64).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64;
        assert!((mean - 0.5772).abs() < 0.02, "{mean}");
        assert!((var - std::f64::consts::PI.powi(2) / 6.0).abs() < 0.05, "{var}");
    }
}
