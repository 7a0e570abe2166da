//! Choosing the next token from the model's logits: greedy at temperature 0, else sampling
//! at the temperature from the nucleus (`top_p`), with a seeded generator so that a seed
//! gives the same tokens every time. The logprob reported for a token is the model's own:
//! the log-softmax of the raw logits, before temperature and `top_p` (vLLM's default).

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// How tokens are chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SamplingParams {
    /// 0 is greedy.
    pub temperature: f64,
    /// In (0, 1].
    pub top_p: f64,
    /// `None` draws a fresh seed.
    pub seed: Option<u64>,
}

/// A token chooser for one generation.
pub(crate) struct Sampler {
    params: SamplingParams,
    rng: StdRng,
    /// Scratch space for the nucleus: (weight, token id).
    weights: Vec<(f64, u32)>,
}

impl Sampler {
    pub fn new(params: SamplingParams) -> Self {
        let rng = match params.seed {
            Some(seed) => StdRng::seed_from_u64(seed),
            None => rand::make_rng(),
        };
        Self {
            params,
            rng,
            weights: Vec::new(),
        }
    }

    /// The next token and its logprob under the raw logits; `None` when the logits are
    /// empty or not all numbers.
    pub fn pick(&mut self, logits: &[f32]) -> Option<(u32, f64)> {
        if logits.is_empty() || logits.iter().any(|logit| logit.is_nan()) {
            return None;
        }
        let (argmax, max) =
            logits
                .iter()
                .enumerate()
                .fold((0, f32::NEG_INFINITY), |best, (index, &logit)| {
                    if logit > best.1 { (index, logit) } else { best }
                });
        if max == f32::NEG_INFINITY {
            return None;
        }
        let log_total = log_sum_exp(logits, max);
        let chosen = if self.params.temperature <= 0.0 {
            argmax
        } else {
            self.sample(logits, max)
        };
        let token = u32::try_from(chosen).ok()?;
        Some((token, f64::from(logits[chosen]) - log_total))
    }

    fn sample(&mut self, logits: &[f32], max: f32) -> usize {
        let temperature = self.params.temperature;
        self.weights.clear();
        self.weights
            .extend(logits.iter().enumerate().map(|(index, &logit)| {
                let weight = ((f64::from(logit) - f64::from(max)) / temperature).exp();
                (weight, index as u32)
            }));
        let mut total: f64 = self.weights.iter().map(|(weight, _)| weight).sum();
        if self.params.top_p < 1.0 {
            self.weights
                .sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            let target = self.params.top_p * total;
            let mut kept = 0.0;
            let mut len = 0;
            for (weight, _) in &self.weights {
                kept += weight;
                len += 1;
                if kept >= target {
                    break;
                }
            }
            self.weights.truncate(len);
            total = kept;
        }
        let mut remaining = self.rng.random::<f64>() * total;
        for &(weight, index) in &self.weights {
            remaining -= weight;
            if remaining < 0.0 {
                return index as usize;
            }
        }
        // Rounding left a sliver past the last weight: the last kept token is the draw.
        self.weights.last().map_or(0, |&(_, index)| index as usize)
    }
}

/// `log(sum(exp(logits)))`, computed around the largest logit.
fn log_sum_exp(logits: &[f32], max: f32) -> f64 {
    let max = f64::from(max);
    let sum: f64 = logits
        .iter()
        .map(|&logit| (f64::from(logit) - max).exp())
        .sum();
    max + sum.ln()
}

/// The log-softmax of `logits` at `index` (the model's own logprob of that token).
pub(crate) fn logprob(logits: &[f32], index: usize) -> Option<f64> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let logit = *logits.get(index)?;
    (max > f32::NEG_INFINITY && !logit.is_nan())
        .then(|| f64::from(logit) - log_sum_exp(logits, max))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(temperature: f64, top_p: f64, seed: u64) -> SamplingParams {
        SamplingParams {
            temperature,
            top_p,
            seed: Some(seed),
        }
    }

    #[test]
    fn greedy_takes_the_largest_logit_with_its_log_softmax() {
        let logits = [1.0, 3.0, 2.0];
        let (token, lp) = Sampler::new(params(0.0, 1.0, 0)).pick(&logits).unwrap();
        assert_eq!(token, 1);
        let expected = 3.0 - (1f64.exp() + 3f64.exp() + 2f64.exp()).ln();
        assert!((lp - expected).abs() < 1e-12, "{lp} vs {expected}");
        assert_eq!(logprob(&logits, 1), Some(lp));
    }

    #[test]
    fn a_seed_repeats_its_draws_and_top_p_keeps_the_nucleus() {
        let logits: Vec<f32> = (0..50).map(|i| (i % 7) as f32 * 0.5).collect();
        let draw = |seed| {
            let mut sampler = Sampler::new(params(1.0, 1.0, seed));
            (0..40)
                .map(|_| sampler.pick(&logits).unwrap().0)
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
        // With a tiny top_p only the best token (the lowest id among equals) is left.
        let mut sampler = Sampler::new(params(1.0, 1e-9, 3));
        for _ in 0..20 {
            assert_eq!(sampler.pick(&logits).unwrap().0, 6);
        }
    }

    #[test]
    fn unusable_logits_give_no_token() {
        let mut sampler = Sampler::new(params(1.0, 1.0, 0));
        assert_eq!(sampler.pick(&[]), None);
        assert_eq!(sampler.pick(&[0.0, f32::NAN]), None);
        assert_eq!(sampler.pick(&[f32::NEG_INFINITY; 3]), None);
    }
}
