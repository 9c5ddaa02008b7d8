//! `eval serve`: a local web board to play the trained model (or minimax) and to step through
//! arena games with the network's evaluation, served by axum with the page embedded.
//!
//! The crate sits above `eval` (it builds the opponents and reads game records) and below the
//! binaries; `eval serve` starts it.
#![deny(missing_docs)]

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::routing::{get, post};
use morris_env::Rules;
use morris_eval::EvalError;
use morris_eval::agents::LoadedModel;
use thiserror::Error;

pub mod api;
pub mod engine;
pub mod session;
pub mod viewer;

/// The largest request body accepted, in bytes.
pub const MAX_BODY: usize = 4096;

/// The page, its script and style, embedded at compile time.
const INDEX_HTML: &str = include_str!("../assets/index.html");
const APP_JS: &str = include_str!("../assets/app.js");
const STYLE_CSS: &str = include_str!("../assets/style.css");

/// How to serve.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// The model the page plays and evaluates with (`None`: minimax only, no evaluation).
    pub model: Option<PathBuf>,
    /// Tables for the perfect opponent (`None`: no perfect play).
    pub tablebase: Option<PathBuf>,
    /// Address to bind (localhost unless asked otherwise).
    pub host: IpAddr,
    /// Port (0: any free port).
    pub port: u16,
    /// Game record files (`eval match --games`) for the viewer.
    pub games: Vec<PathBuf>,
    /// Most games at once.
    pub max_sessions: usize,
    /// Idle time after which a game is dropped.
    pub idle: Duration,
}

impl Default for ServeConfig {
    fn default() -> ServeConfig {
        ServeConfig {
            model: Some(PathBuf::from("checkpoints/shipped")),
            tablebase: None,
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 8080,
            games: Vec::new(),
            max_sessions: 64,
            idle: Duration::from_secs(30 * 60),
        }
    }
}

/// Why the server could not start.
#[derive(Debug, Error)]
pub enum WebError {
    /// The model could not be loaded.
    #[error("cannot load the model {}: {reason}", path.display())]
    Model {
        /// The model directory.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The tables could not be opened.
    #[error("cannot open the tables {}: {reason}", path.display())]
    Tablebase {
        /// The table directory.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A game records file could not be read.
    #[error("{0}")]
    Records(EvalError),
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The server stopped with an error.
    #[error("the server failed: {0}")]
    Serve(std::io::Error),
}

/// What every request shares.
pub struct App {
    /// The network, if any.
    pub model: Option<LoadedModel>,
    /// The tables of the perfect opponent, if any.
    pub tablebase: Option<morris_env::tablebase::SharedTablebase>,
    /// The games.
    pub store: session::Store,
    /// The viewer's games.
    pub records: Vec<viewer::Record>,
    /// The rules of new games.
    pub rules: Rules,
    seeds: AtomicU64,
}

impl App {
    /// Loads the model and the game records.
    pub fn load(config: &ServeConfig) -> Result<App, WebError> {
        let model = match &config.model {
            Some(dir) => {
                // Any variant's model: each game checks that it plays the game's variant.
                let model = LoadedModel::open(dir, None)
                    .map_err(|e| WebError::Model { path: dir.clone(), reason: e.to_string() })?;
                Some(model)
            }
            None => None,
        };
        let tablebase = match &config.tablebase {
            Some(dir) => {
                let tb = morris_env::tablebase::SharedTablebase::open(dir)
                    .map_err(|e| WebError::Tablebase { path: dir.clone(), reason: e.to_string() })?;
                tb.check_rules(&Rules::standard())
                    .map_err(|e| WebError::Tablebase { path: dir.clone(), reason: e.to_string() })?;
                Some(tb)
            }
            None => None,
        };
        let records = viewer::load(&config.games)?;
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        Ok(App {
            model,
            tablebase,
            store: session::Store::new(config.max_sessions.max(1), config.idle, seed),
            records,
            rules: Rules::standard(),
            seeds: AtomicU64::new(seed),
        })
    }

    /// A seed for a new opponent's tie-breaks.
    pub fn next_seed(&self) -> u64 {
        self.seeds.fetch_add(1, Ordering::Relaxed)
    }
}

/// The routes: the page and the JSON API.
pub fn router(app: Arc<App>) -> Router {
    let api = Router::new()
        .route("/info", get(api::info))
        .route("/sessions", post(api::create))
        .route("/sessions/{id}", get(api::show).delete(api::delete))
        .route("/sessions/{id}/move", post(api::play))
        .route("/sessions/{id}/undo", post(api::undo))
        .route("/sessions/{id}/hint", post(api::hint))
        .route("/games", get(api::games))
        .route("/games/{index}", get(api::game))
        .fallback(api::not_found)
        .method_not_allowed_fallback(api::method_not_allowed);
    Router::new()
        .route("/", get(|| async { Html(INDEX_HTML) }))
        .route(
            "/app.js",
            get(|| async {
                ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], APP_JS).into_response()
            }),
        )
        .route(
            "/style.css",
            get(|| async {
                ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE_CSS).into_response()
            }),
        )
        .nest("/api", api)
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(app)
}

/// Binds `config`'s address; returns the listener and the address it got (for port 0).
pub async fn bind(config: &ServeConfig) -> Result<(tokio::net::TcpListener, SocketAddr), WebError> {
    let addr = SocketAddr::new(config.host, config.port);
    let listener =
        tokio::net::TcpListener::bind(addr).await.map_err(|source| WebError::Bind { addr, source })?;
    let local = listener.local_addr().map_err(|source| WebError::Bind { addr, source })?;
    Ok((listener, local))
}

/// Serves `app` on `listener` until Ctrl-C (or `shutdown` resolves).
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Arc<App>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), WebError> {
    axum::serve(listener, router(app)).with_graceful_shutdown(shutdown).await.map_err(WebError::Serve)
}
