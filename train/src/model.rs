//! The policy/value network (residual MLP or residual graph-convolution trunk), masking and the loss.
//!
//! # Data flow
//!
//! `obs [B, C*N]` (the planes of [`morris_env::features::encode`], plane-major; `N` the points
//! of the variant's board, 24 or six men's morris's 16) → trunk → policy head (`[B, A]` logits
//! over the board's actions, [`NetConfig::num_actions`]: 600, or 272) and value head (`[B, 3]`
//! logits over win/draw/loss for the player to move). The scalar value is `P(win) − P(loss)`.
//!
//! # Trunks
//!
//! * [`Trunk::ResMlp`]: flatten → `Linear(C*N → width)` → `blocks` pre-norm residual blocks
//!   (`h + Linear(ReLU(Linear(LayerNorm(h))))`) → `LayerNorm`. Policy: `Linear(width → A)`.
//!   Value: `Linear(width → value_hidden)` → ReLU → `Linear(value_hidden → 3)`.
//! * [`Trunk::GraphConv`]: per point, `Linear(C → width)` plus a learned per-point embedding
//!   (`[24, width]`), then `blocks` pre-norm residual graph convolutions over the board
//!   adjacency, `h + x·W_self + (Â·x)·W_neigh` with `x = ReLU(LayerNorm(h))` and `Â` the
//!   row-normalised adjacency matrix (a constant), then `LayerNorm`. Per-point features stay
//!   `[B, 24, width]` up to the heads. Policy: the 24 point actions get `Linear(width → 1)` of
//!   their point; the 576 move actions `from → to` get the scaled bilinear product
//!   `⟨q_from, k_to⟩ / √policy_dim` of two `Linear(width → policy_dim)` projections, which
//!   matches the action layout `24 + from·24 + to`. Value: mean over points →
//!   `Linear(width → value_hidden)` → ReLU → `Linear(value_hidden → 3)`.
//!
//! The point embedding matters: with mean aggregation over neighbours, a corner (2 neighbours)
//! and a midpoint (3–4) of an empty board would otherwise look the same, and the network could
//! not tell a mill line from a turn at a corner.
//!
//! # Example
//!
//! ```
//! use burn::prelude::*;
//! use morris_train::model::{NetConfig, Trunk};
//!
//! let device = Device::flex();
//! let config = NetConfig { trunk: Trunk::GraphConv, width: 16, blocks: 1, ..NetConfig::default() };
//! let net = config.init(&device);
//! assert!(net.num_params() > 0);
//! let obs = Tensor::<2>::zeros([2, config.obs_len()], &device);
//! let (policy, wdl) = net.forward(obs);
//! assert_eq!(policy.dims(), [2, 600]);
//! assert_eq!(wdl.dims(), [2, 3]);
//! ```

use std::fmt;
use std::str::FromStr;

use burn::module::{ModuleMapper, Param, ParamId};
use burn::nn::{LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::prelude::*;
use burn::tensor::Transaction;
use burn::tensor::activation::{log_softmax, relu, softmax};
use morris_env::Variant;
use morris_env::features::NUM_PLANES;
use serde::{Deserialize, Serialize};

use crate::error::ConfigError;

/// Number of value-head outputs: win, draw, loss (for the player to move), in that order.
pub const NUM_WDL: usize = 3;

/// The logit given to illegal actions before a softmax. Finite on purpose: with `-inf`, a
/// zero target times `log p = -inf` would give `0 · -inf = NaN` in the cross-entropy.
pub const MASK_FILL: f32 = -1.0e9;

/// Largest width and head size [`NetConfig::validate`] accepts: with [`MAX_BLOCKS`] blocks, the
/// weights, gradients and AdamW moments of the largest network still fit in 24 GiB (a guard
/// against a typo or a corrupt config asking for absurd allocations).
const MAX_WIDTH: usize = 2048;
/// Largest block count [`NetConfig::validate`] accepts.
const MAX_BLOCKS: usize = 64;

/// Which trunk the network uses. Serialised in kebab case (`"res-mlp"`, `"graph-conv"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Trunk {
    /// Residual MLP on the flattened planes. Cheap: about 12× fewer multiply-adds per position
    /// than [`Trunk::GraphConv`] at the same width and depth.
    #[default]
    #[serde(alias = "resmlp", alias = "mlp")]
    ResMlp,
    /// Residual graph convolution over the board adjacency, with a pairwise move head.
    #[serde(alias = "graphconv", alias = "graph")]
    GraphConv,
}

impl Trunk {
    /// Both trunks.
    pub const ALL: [Trunk; 2] = [Trunk::ResMlp, Trunk::GraphConv];

    /// The name used in configs and on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            Trunk::ResMlp => "res-mlp",
            Trunk::GraphConv => "graph-conv",
        }
    }
}

impl fmt::Display for Trunk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Trunk {
    type Err = String;

    /// Parses `res-mlp` (or `resmlp`, `mlp`) and `graph-conv` (or `graphconv`, `graph`).
    fn from_str(s: &str) -> Result<Trunk, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "res-mlp" | "resmlp" | "mlp" => Ok(Trunk::ResMlp),
            "graph-conv" | "graphconv" | "graph" => Ok(Trunk::GraphConv),
            other => Err(format!("unknown trunk '{other}' (expected res-mlp or graph-conv)")),
        }
    }
}

/// Shape of the policy/value network. Saved as JSON next to every checkpoint; missing fields
/// take their defaults, unknown fields are an error.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NetConfig {
    /// The trunk architecture. Default: [`Trunk::ResMlp`].
    pub trunk: Trunk,
    /// Hidden width: units per layer (res-mlp) or features per point (graph-conv). Default 128.
    pub width: usize,
    /// Number of residual blocks. Default 4.
    pub blocks: usize,
    /// Graph-conv only: size of the from/to projections of the pairwise move head. Default 32.
    /// The res-mlp policy head is a single `Linear(width → 600)` and ignores it.
    pub policy_dim: usize,
    /// Hidden units of the value head (both trunks). Default 64.
    pub value_hidden: usize,
    /// Input planes `C`; must equal [`NUM_PLANES`] of the observation this build encodes.
    /// Default [`NUM_PLANES`].
    pub input_planes: usize,
    /// The game of the morris family the network plays: its board sets the graph-conv trunk's
    /// adjacency, and a model refuses to play another variant (left out of files for nine men's
    /// morris, so that they read as before variants existed). In a training config it follows
    /// `rules.variant` when `[model]` does not name it.
    #[serde(skip_serializing_if = "Variant::is_nine")]
    pub variant: Variant,
}

impl Default for NetConfig {
    fn default() -> NetConfig {
        NetConfig {
            trunk: Trunk::ResMlp,
            width: 128,
            blocks: 4,
            policy_dim: 32,
            value_hidden: 64,
            input_planes: NUM_PLANES,
            variant: Variant::Nine,
        }
    }
}

impl NetConfig {
    /// Points of the variant's board, `N` (24, or six men's morris's 16): the input's points.
    pub fn num_points(&self) -> usize {
        self.variant.board().num_points
    }

    /// Actions of the variant's board, `N + N²` (600, or 272): the policy head's width.
    pub fn num_actions(&self) -> usize {
        self.variant.board().num_actions()
    }

    /// Length of one flattened input row, `input_planes * N`.
    pub fn obs_len(&self) -> usize {
        self.input_planes * self.num_points()
    }

    /// Checks that every size is positive and sane, and that the input matches this build's
    /// observation layout.
    ///
    /// # Errors
    /// A [`ConfigError::Value`] naming the offending field (`model.…`).
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (name, value, max) in [
            ("width", self.width, MAX_WIDTH),
            ("blocks", self.blocks, MAX_BLOCKS),
            ("policy_dim", self.policy_dim, MAX_WIDTH),
            ("value_hidden", self.value_hidden, MAX_WIDTH),
        ] {
            if value == 0 || value > max {
                return Err(ConfigError::value(
                    format!("model.{name}"),
                    format!("must be in 1..={max}, got {value}"),
                ));
            }
        }
        if self.input_planes != NUM_PLANES {
            return Err(ConfigError::value(
                "model.input_planes",
                format!(
                    "is {}, but this build encodes {NUM_PLANES} planes (a network for another observation layout?)",
                    self.input_planes
                ),
            ));
        }
        Ok(())
    }

    /// Builds a freshly initialised network on `device` (plain for inference, or
    /// `device.autodiff()` for training).
    ///
    /// # Panics
    /// If [`NetConfig::validate`] fails; call it first on configs read from outside.
    pub fn init(&self, device: &Device) -> PolicyValueNet {
        if let Err(e) = self.validate() {
            panic!("{e}");
        }
        let body = match self.trunk {
            Trunk::ResMlp => Body::ResMlp(ResMlpNet::new(self, device)),
            Trunk::GraphConv => Body::GraphConv(GraphNet::new(self, device)),
        };
        PolicyValueNet { body, config: self.clone() }
    }
}

/// The policy/value network. Build it with [`NetConfig::init`]; `num_params()` (from
/// [`Module`]) counts its parameters. The same type serves training (on an autodiff device)
/// and inference (after [`Module::valid`], or built on a plain device).
#[derive(Module, Debug)]
pub struct PolicyValueNet {
    body: Body,
    #[module(skip)]
    config: NetConfig,
}

/// The trunk and heads of one architecture.
// Built once per model and rarely moved, so the variants' size difference does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Module, Debug)]
enum Body {
    ResMlp(ResMlpNet),
    GraphConv(GraphNet),
}

impl PolicyValueNet {
    /// The configuration the network was built from.
    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    /// Renumbers the parameters `1, 2, 3, …` in visiting order. Fresh and loaded networks get
    /// random ids, but optimizer state is keyed by id: training starts from a renumbered network,
    /// and a resumed one is renumbered the same way, so saved AdamW moments find their parameters.
    pub fn with_stable_ids(self) -> PolicyValueNet {
        struct Renumber(u64);
        impl ModuleMapper for Renumber {
            fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
                self.0 += 1;
                let (_, value, mapper) = param.consume();
                Param::from_mapped_value(ParamId::from(self.0), value, mapper)
            }
        }
        self.map(&mut Renumber(0))
    }

    /// Raw outputs for a batch.
    ///
    /// # Shapes
    /// * `obs`: `[B, C*N]`, rows as written by [`morris_env::features::encode`], N the board's
    ///   points ([`NetConfig::num_points`]: 24, or 16 on six men's morris's board);
    /// * returns `([B, A] policy logits, [B, 3] win/draw/loss logits)`, unmasked, A the board's
    ///   actions ([`NetConfig::num_actions`]: 600, or 272).
    pub fn forward(&self, obs: Tensor<2>) -> (Tensor<2>, Tensor<2>) {
        match &self.body {
            Body::ResMlp(net) => net.forward(obs),
            Body::GraphConv(net) => net.forward(obs),
        }
    }

    /// The res-mlp weights on the host (`None` for a graph-conv network).
    pub(crate) fn res_mlp_params(&self) -> Option<ResMlpParams> {
        let Body::ResMlp(net) = &self.body else { return None };
        Some(ResMlpParams {
            width: self.config.width,
            value_hidden: self.config.value_hidden,
            points: self.config.num_points(),
            actions: self.config.num_actions(),
            input: linear_params(&net.input),
            blocks: net
                .blocks
                .iter()
                .map(|b| BlockParams {
                    norm: norm_params(&b.norm),
                    fc1: linear_params(&b.fc1),
                    fc2: linear_params(&b.fc2),
                })
                .collect(),
            out_norm: norm_params(&net.out_norm),
            policy: linear_params(&net.policy),
            value_hidden_fc: linear_params(&net.value_hidden),
            value_out: linear_params(&net.value_out),
        })
    }

    /// Probabilities for a batch: priors (masked softmax, 0 on illegal actions) and
    /// win/draw/loss probabilities.
    ///
    /// # Shapes
    /// `obs [B, C*24]`, `legal [B, 600]` (true = legal) → `([B, 600], [B, 3])`.
    pub fn predict(&self, obs: Tensor<2>, legal: Tensor<2, Bool>) -> (Tensor<2>, Tensor<2>) {
        let (policy, wdl) = self.forward(obs);
        (masked_softmax(policy, legal), softmax(wdl, 1))
    }
}

/// The weights of a res-mlp network copied to the host as plain row-major `f32` arrays, for
/// [`crate::cpu_forward`]. Linear weights are `[inputs, outputs]` (burn's layout: `y = x·W + b`).
#[derive(Clone, Debug)]
pub(crate) struct ResMlpParams {
    pub(crate) width: usize,
    pub(crate) value_hidden: usize,
    /// The board's points, `N` (the input is `C × N`).
    pub(crate) points: usize,
    /// The board's actions (the policy head's width).
    pub(crate) actions: usize,
    pub(crate) input: LinearParams,
    pub(crate) blocks: Vec<BlockParams>,
    pub(crate) out_norm: NormParams,
    pub(crate) policy: LinearParams,
    pub(crate) value_hidden_fc: LinearParams,
    pub(crate) value_out: LinearParams,
}

/// One linear layer: `weight [inputs, outputs]`, `bias [outputs]` (zeros when it has none).
#[derive(Clone, Debug)]
pub(crate) struct LinearParams {
    pub(crate) weight: Vec<f32>,
    pub(crate) bias: Vec<f32>,
}

/// One layer norm: scale and shift (zeros when it has none).
#[derive(Clone, Debug)]
pub(crate) struct NormParams {
    pub(crate) gamma: Vec<f32>,
    pub(crate) beta: Vec<f32>,
}

/// One residual block's layers.
#[derive(Clone, Debug)]
pub(crate) struct BlockParams {
    pub(crate) norm: NormParams,
    pub(crate) fc1: LinearParams,
    pub(crate) fc2: LinearParams,
}

/// The layer norm epsilon of every norm in the network (burn's `LayerNormConfig` default, which
/// the trunks use).
pub(crate) const LAYER_NORM_EPSILON: f32 = 1e-5;

fn host_vec<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data().convert::<f32>().try_into_vec::<f32>().expect("network weights convert to f32")
}

fn linear_params(l: &Linear) -> LinearParams {
    let weight = host_vec(l.weight.val());
    let outputs = l.weight.val().dims()[1];
    let bias = l.bias.as_ref().map_or_else(|| vec![0.0; outputs], |b| host_vec(b.val()));
    LinearParams { weight, bias }
}

fn norm_params(n: &LayerNorm) -> NormParams {
    let gamma = host_vec(n.gamma.val());
    let beta = n.beta.as_ref().map_or_else(|| vec![0.0; gamma.len()], |b| host_vec(b.val()));
    NormParams { gamma, beta }
}

/// A pre-norm residual MLP block: `h + fc2(ReLU(fc1(LayerNorm(h))))`.
#[derive(Module, Debug)]
struct MlpBlock {
    norm: LayerNorm,
    fc1: Linear,
    fc2: Linear,
}

impl MlpBlock {
    fn forward(&self, h: Tensor<2>) -> Tensor<2> {
        let x = self.fc2.forward(relu(self.fc1.forward(self.norm.forward(h.clone()))));
        h + x
    }
}

#[derive(Module, Debug)]
struct ResMlpNet {
    input: Linear,
    blocks: Vec<MlpBlock>,
    out_norm: LayerNorm,
    policy: Linear,
    value_hidden: Linear,
    value_out: Linear,
}

impl ResMlpNet {
    fn new(c: &NetConfig, device: &Device) -> ResMlpNet {
        let w = c.width;
        ResMlpNet {
            input: LinearConfig::new(c.obs_len(), w).init(device),
            blocks: (0..c.blocks)
                .map(|_| MlpBlock {
                    norm: LayerNormConfig::new(w).init(device),
                    fc1: LinearConfig::new(w, w).init(device),
                    fc2: LinearConfig::new(w, w).init(device),
                })
                .collect(),
            out_norm: LayerNormConfig::new(w).init(device),
            policy: LinearConfig::new(w, c.num_actions()).init(device),
            value_hidden: LinearConfig::new(w, c.value_hidden).init(device),
            value_out: LinearConfig::new(c.value_hidden, NUM_WDL).init(device),
        }
    }

    fn forward(&self, obs: Tensor<2>) -> (Tensor<2>, Tensor<2>) {
        let mut h = self.input.forward(obs);
        for block in &self.blocks {
            h = block.forward(h);
        }
        let h = self.out_norm.forward(h);
        let policy = self.policy.forward(h.clone());
        let value = self.value_out.forward(relu(self.value_hidden.forward(h)));
        (policy, value)
    }
}

/// A pre-norm residual graph convolution:
/// `h + x·W_self + Â·(x·W_neigh)` with `x = ReLU(LayerNorm(h))`.
#[derive(Module, Debug)]
struct GraphBlock {
    norm: LayerNorm,
    self_fc: Linear,
    neigh_fc: Linear,
}

impl GraphBlock {
    /// `h [B, 24, W]`, `adj [1, 24, 24]`.
    fn forward(&self, h: Tensor<3>, adj: Tensor<3>) -> Tensor<3> {
        let x = relu(self.norm.forward(h.clone()));
        let own = per_point(&self.self_fc, x.clone());
        let neigh = adj.matmul(per_point(&self.neigh_fc, x));
        h + own + neigh
    }
}

/// `linear` applied to every point of `x [B, 24, K]`, as one `[B*24, K]` product (burn's
/// `Linear` on a rank-3 input takes a slower batched path).
fn per_point(linear: &Linear, x: Tensor<3>) -> Tensor<3> {
    let [b, n, k] = x.dims();
    let y = linear.forward(x.reshape([b * n, k]));
    let out = y.dims()[1];
    y.reshape([b, n, out])
}

#[derive(Module, Debug)]
struct GraphNet {
    input: Linear,
    point_embed: Param<Tensor<2>>,
    blocks: Vec<GraphBlock>,
    out_norm: LayerNorm,
    /// Its bias is inert (a row's legal actions are all points or all moves, and the bias shifts
    /// all point logits alike); kept so that existing graph-conv checkpoints load.
    point_policy: Linear,
    move_from: Linear,
    move_to: Linear,
    value_hidden: Linear,
    value_out: Linear,
    /// Row-normalised adjacency `[1, 24, 24]`, a constant (not saved, rebuilt by `init`).
    adj: Tensor<3>,
    /// `1/√policy_dim`, the bilinear scale.
    move_scale: f32,
    width: usize,
    planes: usize,
    /// The board's points, `N`.
    points: usize,
}

impl GraphNet {
    fn new(c: &NetConfig, device: &Device) -> GraphNet {
        let (w, n) = (c.width, c.num_points());
        let mut adj = c.variant.board().adjacency_matrix();
        for row in adj.chunks_mut(n) {
            let degree: f32 = row.iter().sum();
            row.iter_mut().for_each(|x| *x = if degree > 0.0 { *x / degree } else { 0.0 });
        }
        let adj = Tensor::<3>::from_data(TensorData::new(adj, [1, n, n]), device);
        // Small embedding init, so the planes dominate at the start.
        let embed = Tensor::<2>::random([n, w], burn::tensor::Distribution::Normal(0.0, 0.1), device);
        GraphNet {
            input: LinearConfig::new(c.input_planes, w).init(device),
            point_embed: Param::from_tensor(embed),
            blocks: (0..c.blocks)
                .map(|_| GraphBlock {
                    norm: LayerNormConfig::new(w).init(device),
                    self_fc: LinearConfig::new(w, w).init(device),
                    neigh_fc: LinearConfig::new(w, w).with_bias(false).init(device),
                })
                .collect(),
            out_norm: LayerNormConfig::new(w).init(device),
            point_policy: LinearConfig::new(w, 1).init(device),
            move_from: LinearConfig::new(w, c.policy_dim).init(device),
            move_to: LinearConfig::new(w, c.policy_dim).init(device),
            value_hidden: LinearConfig::new(w, c.value_hidden).init(device),
            value_out: LinearConfig::new(c.value_hidden, NUM_WDL).init(device),
            adj,
            move_scale: 1.0 / (c.policy_dim as f32).sqrt(),
            width: w,
            planes: c.input_planes,
            points: n,
        }
    }

    fn forward(&self, obs: Tensor<2>) -> (Tensor<2>, Tensor<2>) {
        let [b, _] = obs.dims();
        // [B, C*24] plane-major → [B, 24, C]: one row of plane values per point.
        let n = self.points;
        let points = obs.reshape([b, self.planes, n]).swap_dims(1, 2);
        let mut h = per_point(&self.input, points) + self.point_embed.val().unsqueeze::<3>();
        for block in &self.blocks {
            h = block.forward(h, self.adj.clone());
        }
        let h = self.out_norm.forward(h);
        let point_logits = per_point(&self.point_policy, h.clone()).reshape([b, n]);
        let from = per_point(&self.move_from, h.clone());
        let to = per_point(&self.move_to, h.clone());
        // [B, 24, P] · [B, P, 24] → [B, from, to], flattened as `from·24 + to`.
        let move_logits = from.matmul(to.swap_dims(1, 2)).mul_scalar(self.move_scale).reshape([b, n * n]);
        let policy = Tensor::cat(vec![point_logits, move_logits], 1);
        let pooled = h.mean_dim(1).reshape([b, self.width]);
        let value = self.value_out.forward(relu(self.value_hidden.forward(pooled)));
        (policy, value)
    }
}

/// How far below its row's largest legal logit an illegal logit is put by
/// [`masked_log_softmax`]: far enough that it weighs nothing (`e^-80 ≈ 1.8e-35` against at
/// least 1 for the largest legal action), near enough that its exponential, and that of its
/// log-probability (at most `ln 600 ≈ 6.4` lower), stays a normal float. Below about `e^-87`
/// libm's `expf` takes a slow underflow path, and with about 580 illegal actions in a row of
/// 600 that path was a tenth of a training run's time.
pub const MASK_MARGIN: f32 = 80.0;

/// Log-probabilities over legal actions: the logits shifted so that the largest legal one is 0,
/// illegal ones set to `-MASK_MARGIN`, then `log_softmax`. Legal entries are exactly the
/// log-softmax over the legal actions (to rounding), with the same gradient; illegal entries
/// come out near `-80` (finite, so a zero target times them is 0) and receive no gradient.
/// A row with no legal action comes out uniform.
///
/// # Shapes
/// `logits [B, A]`, `legal [B, A]` (true = legal) → `[B, A]`.
pub fn masked_log_softmax(logits: Tensor<2>, legal: Tensor<2, Bool>) -> Tensor<2> {
    let illegal = legal.bool_not();
    let max = logits.clone().detach().mask_fill(illegal.clone(), MASK_FILL).max_dim(1);
    log_softmax((logits - max).mask_fill(illegal, -MASK_MARGIN), 1)
}

/// Probabilities over legal actions: exactly 0 on illegal actions (the filled logits
/// underflow), rows summing to 1 over legal ones. A row with no legal action comes out
/// uniform over all actions; callers must not pass one.
///
/// # Shapes
/// `logits [B, A]`, `legal [B, A]` (true = legal) → `[B, A]`.
pub fn masked_softmax(logits: Tensor<2>, legal: Tensor<2, Bool>) -> Tensor<2> {
    softmax(logits.mask_fill(legal.bool_not(), MASK_FILL), 1)
}

/// The parts of the AlphaZero loss, each a one-element tensor (batch means). On an autodiff
/// device `total` is tracked; call `total.backward()`. The statistics are detached.
#[derive(Clone, Debug)]
pub struct LossParts {
    /// `policy + value`, the quantity to minimise (weight decay is AdamW's job).
    pub total: Tensor<1>,
    /// Soft-target cross-entropy `−Σ π·log p` of the masked policy.
    pub policy: Tensor<1>,
    /// Cross-entropy `−Σ z·log q` of the win/draw/loss target against the value head.
    pub value: Tensor<1>,
    /// Mean entropy of the masked policy `−Σ p·log p` (detached; logging only).
    pub entropy: Tensor<1>,
    /// Fraction of rows where the argmax of the WDL head equals that of the target
    /// (detached; logging only).
    pub value_accuracy: Tensor<1>,
}

/// [`LossParts`] read back to the host.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LossStats {
    /// See [`LossParts::total`].
    pub total: f32,
    /// See [`LossParts::policy`].
    pub policy: f32,
    /// See [`LossParts::value`].
    pub value: f32,
    /// See [`LossParts::entropy`].
    pub entropy: f32,
    /// See [`LossParts::value_accuracy`].
    pub value_accuracy: f32,
}

impl LossParts {
    /// Reads all five numbers back in one transaction.
    ///
    /// # Panics
    /// If the backend fails to read the tensors back (a device error).
    pub fn stats(&self) -> LossStats {
        let data = Transaction::default()
            .register(self.total.clone().detach())
            .register(self.policy.clone().detach())
            .register(self.value.clone().detach())
            .register(self.entropy.clone())
            .register(self.value_accuracy.clone())
            .execute();
        let v: Vec<f32> = data
            .into_iter()
            .map(|d| {
                d.try_into_vec::<f32>().expect("loss tensors are f32").first().copied().unwrap_or(f32::NAN)
            })
            .collect();
        LossStats { total: v[0], policy: v[1], value: v[2], entropy: v[3], value_accuracy: v[4] }
    }
}

/// The AlphaZero loss of `model` on a batch: policy cross-entropy against the search
/// distribution plus value cross-entropy against the value target (the game result, or its mix
/// with the search value: `Sample::value_target`).
///
/// # Shapes
/// * `obs`: `[B, C*24]`;
/// * `legal`: `[B, 600]`, true = legal. `policy_target` must be 0 wherever this is false,
///   or the loss is about `1e9 · π(illegal)`;
/// * `policy_target`: `[B, 600]`, rows summing to 1 (visit distribution);
/// * `wdl_target`: `[B, 3]`, rows summing to 1 (one-hot result for the player to move, or soft).
pub fn alphazero_loss(
    model: &PolicyValueNet,
    obs: Tensor<2>,
    legal: Tensor<2, Bool>,
    policy_target: Tensor<2>,
    wdl_target: Tensor<2>,
) -> LossParts {
    let (policy_logits, wdl_logits) = model.forward(obs);
    loss_from_logits(policy_logits, wdl_logits, legal, policy_target, wdl_target)
}

/// [`alphazero_loss`] from already computed logits (`[B, 600]` and `[B, 3]`).
pub fn loss_from_logits(
    policy_logits: Tensor<2>,
    wdl_logits: Tensor<2>,
    legal: Tensor<2, Bool>,
    policy_target: Tensor<2>,
    wdl_target: Tensor<2>,
) -> LossParts {
    let logp = masked_log_softmax(policy_logits, legal);
    let policy = (policy_target * logp.clone()).sum_dim(1).neg().mean();
    let logq = log_softmax(wdl_logits.clone(), 1);
    let value = (wdl_target.clone() * logq).sum_dim(1).neg().mean();
    let total = policy.clone() + value.clone();
    let logp = logp.detach();
    let entropy = (logp.clone().exp() * logp).sum_dim(1).neg().mean();
    let value_accuracy = wdl_accuracy(wdl_logits.detach(), wdl_target.detach());
    LossParts { total, policy, value, entropy, value_accuracy }
}

/// Mean entropy `−Σ p·log p` of the masked policy, `[1]`. Shapes: `[B, 600]` logits and mask.
pub fn policy_entropy(policy_logits: Tensor<2>, legal: Tensor<2, Bool>) -> Tensor<1> {
    let logp = masked_log_softmax(policy_logits, legal);
    (logp.clone().exp() * logp).sum_dim(1).neg().mean()
}

/// Fraction of rows whose WDL argmax matches the target's, `[1]`. Shapes: `[B, 3]` each.
/// Ties go to the first index (win before draw before loss).
pub fn wdl_accuracy(wdl_logits: Tensor<2>, wdl_target: Tensor<2>) -> Tensor<1> {
    let hit = wdl_logits.argmax(1).equal(wdl_target.argmax(1));
    hit.float().mean()
}
