//! Search settings: simulations, PUCT or UCT constants, first-play urgency, root noise, Gumbel root.

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;

/// How children are scored during selection below the root (and at the root with PUCT).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Selection {
    /// AlphaZero's PUCT: `Q + c(N) · P · sqrt(N) / (1 + n)`, with
    /// `c(N) = pb_c_init + ln((N + pb_c_base + 1) / pb_c_base)` (AlphaZero, Silver et al. 2018).
    Puct,
    /// UCT: `Q + uct_c · sqrt(ln N / n)`, unvisited children first (for the rollout baseline).
    Uct,
}

/// How the root chooses which action a simulation explores.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RootSelection {
    /// The same rule as below the root, with optional Dirichlet noise on the priors.
    Puct,
    /// Gumbel AlphaZero (Danihelka et al., ICLR 2022): Gumbel-top-k sampling of candidate actions
    /// and sequential halving over them; the training target is the completed-Q improved policy.
    Gumbel,
}

/// Settings of a search. Names follow mctx where there is one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MctsConfig {
    /// Simulations per search (per tree).
    pub num_simulations: u32,
    /// Selection rule below the root.
    pub selection: Selection,
    /// Root rule.
    pub root_selection: RootSelection,
    /// PUCT exploration constant at zero visits.
    pub pb_c_init: f32,
    /// PUCT visit scale over which the constant grows (a large value keeps it near `pb_c_init`).
    pub pb_c_base: f32,
    /// UCT exploration constant.
    pub uct_c: f32,
    /// First-play urgency: an unvisited child is valued at the parent's value minus this.
    pub fpu_reduction: f32,
    /// Add Dirichlet noise to the root priors (PUCT root only; self-play).
    pub root_noise: bool,
    /// Dirichlet concentration.
    pub dirichlet_alpha: f32,
    /// Weight of the noise in the root priors.
    pub dirichlet_fraction: f32,
    /// Gumbel: most actions considered at the root (`m` in the paper).
    pub gumbel_max_considered: u32,
    /// Gumbel: `c_visit` of the monotone transform `σ(q) = (c_visit + max N) · c_scale · q`.
    pub gumbel_c_visit: f32,
    /// Gumbel: `c_scale` of that transform.
    pub gumbel_c_scale: f32,
    /// Gumbel: sample the Gumbel noise (self-play); off gives a deterministic search.
    pub gumbel_noise: bool,
    /// Keep the subtree below the played action for the next search.
    pub reuse_tree: bool,
    /// Endgame tables: a leaf inside them takes its exact value (win 1, draw 0, loss −1)
    /// instead of the network's, and a root inside them plays a move that keeps its value
    /// (the search's choice when it does). Not serialized: configs name the directory.
    #[serde(skip)]
    pub tablebase: Option<morris_env::tablebase::SharedTablebase>,
}

impl Default for MctsConfig {
    fn default() -> MctsConfig {
        MctsConfig {
            num_simulations: 100,
            selection: Selection::Puct,
            root_selection: RootSelection::Puct,
            pb_c_init: 1.25,
            pb_c_base: 19652.0,
            uct_c: 2.0,
            fpu_reduction: 0.25,
            root_noise: false,
            dirichlet_alpha: 0.3,
            dirichlet_fraction: 0.25,
            gumbel_max_considered: 16,
            gumbel_c_visit: 50.0,
            gumbel_c_scale: 0.1,
            gumbel_noise: true,
            reuse_tree: true,
            tablebase: None,
        }
    }
}

impl MctsConfig {
    /// Checks the values, naming the first bad key.
    ///
    /// # Errors
    /// A [`ConfigError::Value`] naming the key (`mcts.…`) and the allowed range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let pos = |name: &str, v: f32| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(ConfigError::value(format!("mcts.{name}"), format!("must be a positive number, got {v}")))
            }
        };
        if self.num_simulations == 0 {
            return Err(ConfigError::value("mcts.num_simulations", "must be at least 1"));
        }
        pos("pb_c_init", self.pb_c_init)?;
        pos("pb_c_base", self.pb_c_base)?;
        pos("uct_c", self.uct_c)?;
        pos("dirichlet_alpha", self.dirichlet_alpha)?;
        pos("gumbel_c_visit", self.gumbel_c_visit)?;
        pos("gumbel_c_scale", self.gumbel_c_scale)?;
        if !(0.0..=1.0).contains(&self.dirichlet_fraction) {
            return Err(ConfigError::value(
                "mcts.dirichlet_fraction",
                format!("must be in [0, 1], got {}", self.dirichlet_fraction),
            ));
        }
        if !(self.fpu_reduction.is_finite() && (0.0..=2.0).contains(&self.fpu_reduction)) {
            return Err(ConfigError::value(
                "mcts.fpu_reduction",
                format!("must be in [0, 2], got {}", self.fpu_reduction),
            ));
        }
        if self.gumbel_max_considered < 2 {
            return Err(ConfigError::value("mcts.gumbel_max_considered", "must be at least 2"));
        }
        Ok(())
    }
}
