//! Agent specs: strings such as `random` or `minimax:depth=4` that name a player and build it.

use std::fmt;
use std::time::Duration;

use morris_env::minimax::EvalWeights;
use morris_env::{Agent, Minimax, MinimaxConfig, RandomAgent};

/// The forms an agent spec may take, for error messages and `--help`.
pub const SPEC_FORMS: &str = "random | minimax:depth=D | minimax:time=T (e.g. 100ms, 2s) | minimax:nodes=N \
(options combine, e.g. minimax:depth=8,time=1s; add tt=BITS for the table size, default 18)";

/// A parsed agent spec. It can build any number of independent agents (one per game, so games
/// can run in parallel), each seeded for reproducibility.
#[derive(Clone, Debug, PartialEq)]
pub enum AgentSpec {
    /// Uniformly random legal moves.
    Random,
    /// The alpha-beta baseline with these limits (its seed is set per game).
    Minimax(MinimaxConfig),
}

/// Why a spec could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// The spec as given.
    pub spec: String,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad agent spec '{}': {}. Valid forms: {SPEC_FORMS}", self.spec, self.reason)
    }
}

impl std::error::Error for SpecError {}

/// Parses a duration such as `100ms`, `2s`, `1.5s` or `250us`.
fn parse_duration(text: &str) -> Option<Duration> {
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

impl AgentSpec {
    /// Parses a spec string.
    ///
    /// # Errors
    /// A [`SpecError`] that names the problem and lists the valid forms.
    pub fn parse(spec: &str) -> Result<AgentSpec, SpecError> {
        let err = |reason: String| SpecError { spec: spec.to_string(), reason };
        let (kind, args) = match spec.trim().split_once(':') {
            Some((k, a)) => (k, Some(a)),
            None => (spec.trim(), None),
        };
        match kind {
            "random" => match args {
                None => Ok(AgentSpec::Random),
                Some(_) => Err(err("random takes no options".into())),
            },
            "minimax" => {
                let args = args.ok_or_else(|| err("minimax needs a limit: depth, time or nodes".into()))?;
                let mut c = MinimaxConfig {
                    depth: None,
                    time: None,
                    nodes: None,
                    tt_bits: 18,
                    seed: 0,
                    weights: EvalWeights::default(),
                };
                for kv in args.split(',') {
                    let (k, v) = kv.split_once('=').ok_or_else(|| err(format!("'{kv}' is not key=value")))?;
                    match k.trim() {
                        "depth" => {
                            let d: u32 =
                                v.parse().map_err(|_| err(format!("depth '{v}' is not a whole number")))?;
                            if !(1..=64).contains(&d) {
                                return Err(err(format!("depth {d} is outside 1..=64")));
                            }
                            c.depth = Some(d);
                        }
                        "time" => {
                            c.time = Some(parse_duration(v.trim()).ok_or_else(|| {
                                err(format!("time '{v}' is not a positive duration such as 100ms or 2s"))
                            })?);
                        }
                        "nodes" => {
                            let n: u64 =
                                v.parse().map_err(|_| err(format!("nodes '{v}' is not a whole number")))?;
                            if n == 0 {
                                return Err(err("nodes must be positive".into()));
                            }
                            c.nodes = Some(n);
                        }
                        "tt" => {
                            let b: u32 =
                                v.parse().map_err(|_| err(format!("tt '{v}' is not a whole number")))?;
                            if !(10..=30).contains(&b) {
                                return Err(err(format!("tt {b} is outside 10..=30 (bits)")));
                            }
                            c.tt_bits = b;
                        }
                        other => return Err(err(format!("unknown minimax option '{other}'"))),
                    }
                }
                if c.depth.is_none() && c.time.is_none() && c.nodes.is_none() {
                    return Err(err("minimax needs a limit: depth, time or nodes".into()));
                }
                Ok(AgentSpec::Minimax(c))
            }
            "" => Err(err("empty spec".into())),
            other => Err(err(format!("unknown agent '{other}'"))),
        }
    }

    /// A depth-limited minimax spec with the default table size (as `minimax:depth=D`).
    pub fn minimax_depth(depth: u32) -> AgentSpec {
        AgentSpec::Minimax(MinimaxConfig { tt_bits: 18, ..MinimaxConfig::depth(depth) })
    }

    /// A new agent with the given seed (for the random moves or the tie-break).
    pub fn build(&self, seed: u64) -> Box<dyn Agent> {
        match self {
            AgentSpec::Random => Box::new(RandomAgent::new(seed)),
            AgentSpec::Minimax(c) => Box::new(Minimax::new(MinimaxConfig { seed, ..c.clone() })),
        }
    }

    /// The canonical spec string, such as `minimax:depth=4`.
    pub fn name(&self) -> String {
        match self {
            AgentSpec::Random => "random".into(),
            AgentSpec::Minimax(c) => {
                let mut parts = Vec::new();
                if let Some(d) = c.depth {
                    parts.push(format!("depth={d}"));
                }
                if let Some(t) = c.time {
                    parts.push(format!("time={}ms", t.as_millis()));
                }
                if let Some(n) = c.nodes {
                    parts.push(format!("nodes={n}"));
                }
                if c.tt_bits != 18 {
                    parts.push(format!("tt={}", c.tt_bits));
                }
                format!("minimax:{}", parts.join(","))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_forms() {
        assert_eq!(AgentSpec::parse("random"), Ok(AgentSpec::Random));
        let s = AgentSpec::parse("minimax:depth=4").unwrap();
        assert_eq!(s.name(), "minimax:depth=4");
        let s = AgentSpec::parse("minimax:time=100ms").unwrap();
        assert_eq!(s.name(), "minimax:time=100ms");
        let s = AgentSpec::parse("minimax:depth=8,time=1.5s,tt=16").unwrap();
        assert_eq!(s.name(), "minimax:depth=8,time=1500ms,tt=16");
        assert_eq!(AgentSpec::parse("minimax:nodes=5000").unwrap().name(), "minimax:nodes=5000");
    }

    #[test]
    fn bad_specs_name_the_problem_and_list_the_forms() {
        for (spec, needle) in [
            ("", "empty"),
            ("alphago", "unknown agent 'alphago'"),
            ("minimax", "needs a limit"),
            ("minimax:depth=x", "not a whole number"),
            ("minimax:depth=0", "outside"),
            ("minimax:time=fast", "not a positive duration"),
            ("minimax:time=-1s", "not a positive duration"),
            ("minimax:speed=3", "unknown minimax option"),
            ("minimax:depth", "not key=value"),
            ("random:seed=1", "no options"),
        ] {
            let e = AgentSpec::parse(spec).unwrap_err().to_string();
            assert!(e.contains(needle), "{spec}: {e}");
            assert!(e.contains("Valid forms"), "{e}");
        }
    }
}
