//! The JSON API: sessions (new game, move, undo, hint), the games list and replays, and the
//! errors, each a JSON object with a message and the fitting status code.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use morris_env::{Color, Game, NotationError, Variant};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::App;
use crate::engine::{Engine, Opponent};
use crate::session::{Session, View};

/// An error answer: the status and a message for the page.
#[derive(Debug)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// What went wrong.
    pub message: String,
}

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError { status, message: message.into() }
    }

    fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({ "error": self.message }))).into_response()
    }
}

/// JSON for unknown API paths.
pub async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "no such API endpoint")
}

/// JSON for a known path with the wrong method.
pub async fn method_not_allowed() -> ApiError {
    ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "this method is not allowed here")
}

/// Reads a JSON body, with errors that say what is wrong (too large, not JSON, a bad field).
fn parse<T: DeserializeOwned>(body: Result<Bytes, BytesRejection>) -> Result<T, ApiError> {
    let bytes = body
        .map_err(|e| ApiError::new(e.status(), format!("cannot read the request body: {}", e.body_text())))?;
    let bytes: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) { b"{}" } else { &bytes };
    serde_json::from_slice(bytes).map_err(|e| ApiError::bad_request(format!("malformed request: {e}")))
}

fn session_id(text: &str) -> Result<u64, ApiError> {
    u64::from_str_radix(text, 16)
        .map_err(|_| ApiError::new(StatusCode::NOT_FOUND, format!("unknown session '{text}'")))
}

fn find(app: &App, text: &str) -> Result<(u64, Arc<Mutex<Session>>), ApiError> {
    let id = session_id(text)?;
    let entry = app.store.get(id).ok_or_else(|| {
        ApiError::new(StatusCode::NOT_FOUND, format!("unknown or expired session '{text}'"))
    })?;
    Ok((id, entry))
}

/// Runs `f` on the session off the request threads (searches take up to seconds), so that one
/// slow search does not hold up other sessions.
async fn with_session<T: Send + 'static>(
    entry: Arc<Mutex<Session>>,
    f: impl FnOnce(&mut Session) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(move || {
        let mut session = entry.lock().unwrap_or_else(|e| e.into_inner());
        session.touched = Instant::now();
        f(&mut session)
    })
    .await
    .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("the search failed: {e}")))?
}

/// `GET /api/info`.
pub async fn info(State(app): State<Arc<App>>) -> Json<serde_json::Value> {
    Json(json!({
        "model": app.model.as_ref().map(|m| m.dir.display().to_string()),
        "tablebase": app.tablebase.as_ref().map(|t| t.dir().display().to_string()),
        "perfect": app.tablebase.as_ref().is_some_and(|t| t.covers_placement()),
        "model_variant": app.model.as_ref().map(|m| m.network().config().variant.name()),
        "variants": Variant::NAMES,
        "games": app.records.len(),
        "sessions": app.store.len(),
        "limits": {
            "max_sessions": app.store.max,
            "idle_seconds": app.store.idle.as_secs(),
            "max_time_ms": crate::engine::MAX_TIME.as_millis() as u64,
            "max_simulations": crate::engine::MAX_SIMULATIONS,
            "max_depth": crate::engine::MAX_DEPTH,
            "max_body_bytes": crate::MAX_BODY,
        },
    }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewGame {
    #[serde(default)]
    human: Option<String>,
    #[serde(default)]
    variant: Option<String>,
    #[serde(default)]
    opponent: Option<Opponent>,
}

/// `POST /api/sessions`: `{"human": "white"|"black", "variant": "nine"|"twelve"|"morabaraba"|"lasker"|"six"|"three",
/// "opponent": {"kind": "model", "simulations": 200} | {"kind": "minimax", "depth": 4} |
/// {"kind": "perfect"}}`; the engine moves first when the human plays Black. The game is of
/// `variant` (the server's `--rules` variant when left out) under the server's draw rules, with
/// the variant's own flying; a model or tables of another variant are refused, naming both.
pub async fn create(
    State(app): State<Arc<App>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<View>), ApiError> {
    let request: NewGame = parse(body)?;
    let human = match request.human.as_deref() {
        None | Some("white") => Color::White,
        Some("black") => Color::Black,
        Some(other) => {
            return Err(ApiError::bad_request(format!("human must be 'white' or 'black', got '{other}'")));
        }
    };
    let variant = match request.variant.as_deref() {
        None => app.rules.variant,
        Some(name) => name.parse::<Variant>().map_err(|e| ApiError::bad_request(e.to_string()))?,
    };
    let rules = app.rules.for_variant(variant);
    let model_variant = app.model.as_ref().map(|m| m.network().config().variant);
    let opponent = request.opponent.unwrap_or(if model_variant == Some(variant) {
        Opponent::Model { simulations: None, time_ms: None }
    } else {
        Opponent::Minimax { depth: None, time_ms: None }
    });
    opponent.validate(model_variant, app.tablebase.as_ref(), &rules).map_err(ApiError::bad_request)?;
    let seed = app.next_seed();
    let engine = Engine::build(&opponent, app.model.as_ref(), app.tablebase.as_ref(), seed)
        .map_err(ApiError::bad_request)?;
    let session = Session {
        game: Game::new(rules),
        human,
        opponent,
        engine,
        last_engine: Vec::new(),
        touched: Instant::now(),
    };
    let (id, entry) = app.store.insert(session).ok_or_else(|| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "too many games ({} at most): try again when one has been idle for {} s",
                app.store.max,
                app.store.idle.as_secs()
            ),
        )
    })?;
    let view = with_session(entry, move |s| {
        s.engine_plays();
        Ok(s.view(id))
    })
    .await?;
    Ok((StatusCode::CREATED, Json(view)))
}

/// `GET /api/sessions/{id}`.
pub async fn show(State(app): State<Arc<App>>, Path(id): Path<String>) -> Result<Json<View>, ApiError> {
    let (id, entry) = find(&app, &id)?;
    with_session(entry, move |s| Ok(s.view(id))).await.map(Json)
}

/// `DELETE /api/sessions/{id}`.
pub async fn delete(State(app): State<Arc<App>>, Path(id): Path<String>) -> Result<StatusCode, ApiError> {
    let (key, _) = find(&app, &id)?;
    app.store.remove(key);
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlayMove {
    #[serde(rename = "move")]
    mv: String,
}

/// `POST /api/sessions/{id}/move` with `{"move": "a1-a4"}`: the human's move, then the
/// engine's answer (its moves until the human is to move again).
pub async fn play(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<View>, ApiError> {
    let request: PlayMove = parse(body)?;
    let (id, entry) = find(&app, &id)?;
    with_session(entry, move |s| {
        if s.game.outcome().is_terminal() {
            return Err(ApiError::new(StatusCode::CONFLICT, "the game is over: start a new one"));
        }
        if s.game.current_player() != s.human {
            return Err(ApiError::new(StatusCode::CONFLICT, "it is not your turn"));
        }
        let action = s.game.position().parse_action(&request.mv, s.game.rules()).map_err(|e| match e {
            NotationError::Illegal { .. }
            | NotationError::ExpectedRemoval(_)
            | NotationError::UnexpectedRemoval(_) => {
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string())
            }
            _ => ApiError::bad_request(e.to_string()),
        })?;
        s.game.apply(action).map_err(|e| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()))?;
        s.engine_plays();
        Ok(s.view(id))
    })
    .await
    .map(Json)
}

/// `POST /api/sessions/{id}/undo`: takes back the human's last turn and the engine's answer.
pub async fn undo(State(app): State<Arc<App>>, Path(id): Path<String>) -> Result<Json<View>, ApiError> {
    let (id, entry) = find(&app, &id)?;
    with_session(entry, move |s| {
        let human = s.human;
        // `history()[i]` is the position before action `i`: its player to move made it.
        let mover = |g: &Game, i: usize| g.history()[i].current_player();
        if !(0..s.game.actions().len()).any(|i| mover(&s.game, i) == human) {
            return Err(ApiError::new(StatusCode::CONFLICT, "nothing to undo: you have not moved yet"));
        }
        // Back to the start of the human's last turn (a move and, after a mill, its removal).
        let mut undid_human = false;
        while let Some(last) = s.game.actions().len().checked_sub(1) {
            undid_human |= mover(&s.game, last) == human;
            s.game.undo();
            let n = s.game.actions().len();
            let turn_start = n == 0 || mover(&s.game, n - 1) != human;
            if undid_human && s.game.current_player() == human && turn_start {
                break;
            }
        }
        s.last_engine.clear();
        Ok(s.view(id))
    })
    .await
    .map(Json)
}

/// `POST /api/sessions/{id}/hint`: the engine's suggestion for the human (not played).
pub async fn hint(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let (_, entry) = find(&app, &id)?;
    with_session(entry, move |s| {
        if s.game.outcome().is_terminal() || s.game.current_player() != s.human {
            return Err(ApiError::new(StatusCode::CONFLICT, "a hint is for your turn in a live game"));
        }
        let game = s.game.clone();
        let analysis = s
            .engine
            .think(&game)
            .ok_or_else(|| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "the engine found no move"))?;
        Ok(json!({ "hint": analysis }))
    })
    .await
    .map(Json)
}

/// `GET /api/games`: the games of the `--games` files.
pub async fn games(State(app): State<Arc<App>>) -> Json<serde_json::Value> {
    let list: Vec<_> = app.records.iter().enumerate().map(|(i, r)| r.summary(i)).collect();
    Json(json!({ "games": list }))
}

/// `GET /api/games/{index}`: one game, its positions and the network's evaluation of each.
pub async fn game(
    State(app): State<Arc<App>>,
    Path(index): Path<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let i: usize = index.parse().ok().filter(|&i| i < app.records.len()).ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            format!("no game '{index}' ({} games are loaded)", app.records.len()),
        )
    })?;
    let replay = tokio::task::spawn_blocking(move || app.records[i].replay(i, app.model.as_ref()))
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("the replay failed: {e}")))?
        .map_err(|e| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, e))?;
    Ok(Json(serde_json::to_value(replay).unwrap_or_default()))
}
