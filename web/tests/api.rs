//! HTTP-level tests of the web board's API through the real router: whole games, illegal and
//! malformed input, undo, hints, limits, expiry, the viewer and concurrent sessions.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use morris_web::{App, ServeConfig, router};
use serde_json::{Value, json};
use tower::ServiceExt;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn config(model: bool) -> ServeConfig {
    ServeConfig {
        model: model.then(|| repo().join("checkpoints/shipped")),
        games: vec![repo().join("web/tests/data/games.jsonl")],
        ..ServeConfig::default()
    }
}

fn app(config: &ServeConfig) -> Router {
    router(Arc::new(App::load(config).expect("the app loads")))
}

async fn call(app: &Router, method: &str, path: &str, body: Option<&str>) -> (StatusCode, Value) {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(body.map_or_else(Body::empty, |b| Body::from(b.to_string())))
        .expect("request");
    let response = app.clone().oneshot(request).await.expect("response");
    let status = response.status();
    let bytes = response.into_body().collect().await.expect("body").to_bytes();
    let value = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).unwrap_or(Value::String(String::from_utf8_lossy(&bytes).into()))
    };
    (status, value)
}

async fn new_game(app: &Router, body: Value) -> Value {
    let (status, view) = call(app, "POST", "/api/sessions", Some(&body.to_string())).await;
    assert_eq!(status, StatusCode::CREATED, "{view}");
    view
}

/// Plays session `id` from `view` to the end, the human taking legal move `k · stride` (mod the
/// count) on turn k; returns the final view.
async fn play_to_the_end(app: &Router, id: &str, mut view: Value, stride: usize) -> Value {
    let mut k = 0usize;
    while !view["over"].as_bool().unwrap() {
        let moves = legal(&view);
        let mv = &moves[k * stride % moves.len()];
        k += 1;
        let (status, next) =
            call(app, "POST", &format!("/api/sessions/{id}/move"), Some(&json!({"move": mv}).to_string()))
                .await;
        assert_eq!(status, StatusCode::OK, "{next}");
        view = next;
        assert!(k < 500, "the game ends");
    }
    view
}

fn legal(view: &Value) -> Vec<String> {
    view["legal"].as_array().expect("legal").iter().map(|m| m.as_str().expect("move").to_string()).collect()
}

#[tokio::test]
async fn the_page_and_its_assets_are_served() {
    let app = app(&config(false));
    for (path, needle) in
        [("/", "<svg id=\"board\""), ("/app.js", "function drawBoard"), ("/style.css", ".piece")]
    {
        let response = app.clone().oneshot(Request::get(path).body(Body::empty()).unwrap()).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        let text =
            String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
        assert!(text.contains(needle), "{path}");
    }
    let (status, info) = call(&app, "GET", "/api/info", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(info["model"], Value::Null);
    assert_eq!(info["games"], 4);
}

#[tokio::test]
async fn a_whole_game_against_minimax_ends_with_a_result_and_a_reason() {
    let app = app(&config(false));
    let mut view =
        new_game(&app, json!({"human": "white", "opponent": {"kind": "minimax", "depth": 1}})).await;
    let id = view["id"].as_str().unwrap().to_string();
    let mut k = 0usize;
    while !view["over"].as_bool().unwrap() {
        assert_eq!(view["to_move"], "white", "the engine answers before the human moves again");
        let moves = legal(&view);
        let mv = &moves[k * 7 % moves.len()];
        k += 1;
        let (status, next) =
            call(&app, "POST", &format!("/api/sessions/{id}/move"), Some(&json!({"move": mv}).to_string()))
                .await;
        assert_eq!(status, StatusCode::OK, "{next}");
        if !next["over"].as_bool().unwrap() {
            let engine = next["engine"].as_array().unwrap();
            assert!(!engine.is_empty());
            let wdl: u64 = engine[0]["wdl"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).sum();
            assert_eq!(wdl, 1000);
        }
        view = next;
        assert!(k < 500, "the game ends");
    }
    assert!(["1-0", "0-1", "1/2-1/2"].contains(&view["result"].as_str().unwrap()));
    assert!(!view["reason"].as_str().unwrap().is_empty());
    assert!(legal(&view).is_empty());
    let (status, err) =
        call(&app, "POST", &format!("/api/sessions/{id}/move"), Some(r#"{"move": "d6"}"#)).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(err["error"].as_str().unwrap().contains("over"));
}

/// A game of twelve men's morris: the view gives its board (the diagonals among its 40 lines),
/// its moves include the diagonal mill, and minimax plays it to the end; the nine men's morris
/// model and an unknown variant are refused, naming them.
#[tokio::test]
async fn a_game_of_twelve_mens_morris_has_its_board_and_refuses_the_nine_model() {
    let app = app(&config(true));
    let (_, info) = call(&app, "GET", "/api/info", None).await;
    assert_eq!(
        (info["model_variant"].as_str(), info["variants"].as_array().map(Vec::len)),
        (Some("nine"), Some(6))
    );
    let body = json!({"human": "white", "variant": "twelve", "opponent": {"kind": "minimax", "depth": 1}});
    let mut view = new_game(&app, body).await;
    assert_eq!(view["variant"], "twelve");
    assert_eq!((view["points"].as_array().unwrap().len(), view["lines"].as_array().unwrap().len()), (24, 40));
    assert!(view["lines"].as_array().unwrap().contains(&json!(["a7", "b6"])), "a diagonal");
    let id = view["id"].as_str().unwrap().to_string();
    view = play_to_the_end(&app, &id, view, 5).await;
    assert!(["1-0", "0-1", "1/2-1/2"].contains(&view["result"].as_str().unwrap()), "{view}");
    // Twelve pieces a side: more placements than nine's 18 turns before anyone slides.
    let placements = view["moves"]
        .as_array()
        .unwrap()
        .iter()
        .take(24)
        .filter(|m| !m.as_str().unwrap().contains('-'))
        .count();
    assert!(placements > 18, "{view}");

    for (body, needle) in [
        (
            json!({"variant": "twelve", "opponent": {"kind": "model"}}),
            "the model plays the 'nine' variant, not 'twelve'",
        ),
        (json!({"variant": "four"}), "unknown variant 'four'"),
        (
            json!({"variant": "six", "opponent": {"kind": "model"}}),
            "the model plays the 'nine' variant, not 'six'",
        ),
    ] {
        let (status, err) = call(&app, "POST", "/api/sessions", Some(&body.to_string())).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
        assert!(err["error"].as_str().unwrap().contains(needle), "{err}");
    }
    // Lasker morris: nine's board, 10 in hand, and a slide among the legal moves while placing.
    let body = json!({"human": "white", "variant": "lasker", "opponent": {"kind": "minimax", "depth": 1}});
    let view = new_game(&app, body).await;
    assert_eq!((view["variant"].as_str(), view["lines"].as_array().unwrap().len()), (Some("lasker"), 32));
    let id = view["id"].as_str().unwrap().to_string();
    let (status, view) =
        call(&app, "POST", &format!("/api/sessions/{id}/move"), Some(r#"{"move": "a7"}"#)).await;
    assert_eq!(status, StatusCode::OK, "{view}");
    let slide = legal(&view).into_iter().find(|m| m.starts_with("a7-")).expect("a slide from a7");
    let (status, view) =
        call(&app, "POST", &format!("/api/sessions/{id}/move"), Some(&json!({"move": slide}).to_string()))
            .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["moves"][2], json!(slide));
    assert_eq!(view["in_hand"][0], 9, "{view}");

    // Six men's morris: its own 16 points and 20 lines, its names in the moves, played to the end.
    let body = json!({"human": "white", "variant": "six", "opponent": {"kind": "minimax", "depth": 1}});
    let mut view = new_game(&app, body).await;
    assert_eq!(view["variant"], "six");
    assert_eq!((view["points"].as_array().unwrap().len(), view["lines"].as_array().unwrap().len()), (16, 20));
    assert!(view["lines"].as_array().unwrap().contains(&json!(["a5", "c5"])), "{view}");
    assert!(legal(&view).contains(&"e1".to_string()) && !legal(&view).contains(&"g7".to_string()));
    let id = view["id"].as_str().unwrap().to_string();
    let (status, err) =
        call(&app, "POST", &format!("/api/sessions/{id}/move"), Some(r#"{"move": "g7"}"#)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    assert!(err["error"].as_str().unwrap().contains("g7"), "{err}");
    view = play_to_the_end(&app, &id, view, 3).await;
    assert!(["1-0", "0-1", "1/2-1/2"].contains(&view["result"].as_str().unwrap()), "{view}");
    let names: Vec<&str> = view["points"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
    for p in view["white"].as_array().unwrap().iter().chain(view["black"].as_array().unwrap()) {
        assert!(names.contains(&p.as_str().unwrap()), "{p} is one of six's points");
    }

    // Three men's morris: 9 points and 16 lines (the centre-corner diagonals among them), played
    // to the end against minimax.
    let body = json!({"human": "white", "variant": "three", "opponent": {"kind": "minimax", "depth": 1}});
    let view = new_game(&app, body).await;
    assert_eq!((view["points"].as_array().unwrap().len(), view["lines"].as_array().unwrap().len()), (9, 16));
    assert!(view["lines"].as_array().unwrap().contains(&json!(["a3", "b2"])), "{view}");
    let id = view["id"].as_str().unwrap().to_string();
    let view = play_to_the_end(&app, &id, view, 3).await;
    assert!(["1-0", "0-1", "1/2-1/2"].contains(&view["result"].as_str().unwrap()), "{view}");

    // Left out, the variant is nine men's morris, and the model plays it.
    let view = new_game(&app, json!({"opponent": {"kind": "model", "simulations": 2}})).await;
    assert_eq!((view["variant"].as_str(), view["lines"].as_array().unwrap().len()), (Some("nine"), 32));
}

#[tokio::test]
async fn bad_input_gets_json_errors_with_the_right_status() {
    let app = app(&config(false));
    let view = new_game(&app, json!({"opponent": {"kind": "minimax", "depth": 1}})).await;
    let id = view["id"].as_str().unwrap();
    let mv = format!("/api/sessions/{id}/move");
    let cases: Vec<(&str, String, Option<String>, StatusCode, &str)> = vec![
        ("POST", mv.clone(), Some(r#"{"move": "z9"}"#.into()), StatusCode::BAD_REQUEST, "z9"),
        ("POST", mv.clone(), Some(r#"{"move": "a1-a4"}"#.into()), StatusCode::UNPROCESSABLE_ENTITY, "a1"),
        ("POST", mv.clone(), Some(r#"{"move": "xd6"}"#.into()), StatusCode::UNPROCESSABLE_ENTITY, "d6"),
        ("POST", mv.clone(), Some("not json".into()), StatusCode::BAD_REQUEST, "malformed"),
        ("POST", mv.clone(), Some(r#"{"mvoe": "d6"}"#.into()), StatusCode::BAD_REQUEST, "mvoe"),
        (
            "POST",
            mv.clone(),
            Some(format!(r#"{{"move": "{}"}}"#, "d".repeat(5000))),
            StatusCode::PAYLOAD_TOO_LARGE,
            "body",
        ),
        (
            "POST",
            "/api/sessions/0123abc/move".into(),
            Some(r#"{"move": "d6"}"#.into()),
            StatusCode::NOT_FOUND,
            "unknown",
        ),
        ("GET", "/api/sessions/not-hex".into(), None, StatusCode::NOT_FOUND, "unknown"),
        ("GET", "/api/nothing".into(), None, StatusCode::NOT_FOUND, "no such"),
        ("PUT", "/api/info".into(), None, StatusCode::METHOD_NOT_ALLOWED, "method"),
        ("POST", "/api/sessions".into(), Some(r#"{"human": "red"}"#.into()), StatusCode::BAD_REQUEST, "red"),
        (
            "POST",
            "/api/sessions".into(),
            Some(r#"{"opponent": {"kind": "model"}}"#.into()),
            StatusCode::BAD_REQUEST,
            "no model",
        ),
        (
            "POST",
            "/api/sessions".into(),
            Some(r#"{"opponent": {"kind": "minimax", "depth": 99}}"#.into()),
            StatusCode::BAD_REQUEST,
            "depth",
        ),
        (
            "POST",
            "/api/sessions".into(),
            Some(r#"{"opponent": {"kind": "minimax", "time_ms": 999999}}"#.into()),
            StatusCode::BAD_REQUEST,
            "time_ms",
        ),
        (
            "POST",
            "/api/sessions".into(),
            Some(r#"{"opponent": {"kind": "alphago"}}"#.into()),
            StatusCode::BAD_REQUEST,
            "alphago",
        ),
        ("GET", "/api/games/99".into(), None, StatusCode::NOT_FOUND, "no game"),
        ("POST", format!("/api/sessions/{id}/undo"), None, StatusCode::CONFLICT, "nothing to undo"),
    ];
    for (method, path, body, status, needle) in cases {
        let (got, value) = call(&app, method, &path, body.as_deref()).await;
        assert_eq!(got, status, "{method} {path} {body:?}: {value}");
        let message =
            value["error"].as_str().unwrap_or_else(|| panic!("{method} {path}: no JSON error: {value}"));
        assert!(message.contains(needle), "{method} {path}: '{message}' should mention '{needle}'");
    }
    // Nothing changed, and the server keeps serving.
    let (status, same) = call(&app, "GET", &format!("/api/sessions/{id}"), None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(same["moves"], json!([]));
}

#[tokio::test]
async fn undo_takes_back_the_humans_turn_and_the_answer() {
    let app = app(&config(false));
    let view = new_game(&app, json!({"opponent": {"kind": "minimax", "depth": 2}})).await;
    let id = view["id"].as_str().unwrap();
    let (_, one) = call(&app, "POST", &format!("/api/sessions/{id}/move"), Some(r#"{"move": "d6"}"#)).await;
    assert_eq!(one["moves"].as_array().unwrap().len(), 2);
    let (_, two) = call(
        &app,
        "POST",
        &format!("/api/sessions/{id}/move"),
        Some(&json!({"move": legal(&one)[0]}).to_string()),
    )
    .await;
    assert_eq!(two["moves"].as_array().unwrap().len(), 4);
    let (status, back) = call(&app, "POST", &format!("/api/sessions/{id}/undo"), None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(back["moves"], one["moves"]);
    assert_eq!(back["to_move"], "white");
    let (_, start) = call(&app, "POST", &format!("/api/sessions/{id}/undo"), None).await;
    assert_eq!(start["moves"], json!([]));
}

#[tokio::test]
async fn the_model_answers_with_its_evaluation_and_moves_first_for_a_black_human() {
    let app = app(&config(true));
    let view =
        new_game(&app, json!({"human": "black", "opponent": {"kind": "model", "simulations": 32}})).await;
    assert_eq!(view["moves"].as_array().unwrap().len(), 1, "the model opened");
    assert_eq!(view["to_move"], "black");
    let engine = &view["engine"][0];
    assert_eq!(engine["move"], view["moves"][0]);
    assert_eq!(engine["pv"][0], engine["move"]);
    assert!(engine["nodes"].as_u64().unwrap() >= 32);
    let id = view["id"].as_str().unwrap();
    let (status, hint) = call(&app, "POST", &format!("/api/sessions/{id}/hint"), None).await;
    assert_eq!(status, StatusCode::OK, "{hint}");
    assert!(legal(&view).contains(&hint["hint"]["move"].as_str().unwrap().to_string()));
    let (_, still) = call(&app, "GET", &format!("/api/sessions/{id}"), None).await;
    assert_eq!(still["moves"], view["moves"], "a hint is not played");
}

#[tokio::test]
async fn sessions_are_bounded_and_idle_ones_expire() {
    let mut c = config(false);
    c.max_sessions = 2;
    let bounded = app(&c);
    let body = json!({"opponent": {"kind": "minimax", "depth": 1}});
    new_game(&bounded, body.clone()).await;
    new_game(&bounded, body.clone()).await;
    let (status, err) = call(&bounded, "POST", "/api/sessions", Some(&body.to_string())).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(err["error"].as_str().unwrap().contains("too many games"));

    c.idle = Duration::from_millis(50);
    let expiring = app(&c);
    let first = new_game(&expiring, body.clone()).await;
    new_game(&expiring, body.clone()).await;
    tokio::time::sleep(Duration::from_millis(80)).await;
    let (status, _) =
        call(&expiring, "GET", &format!("/api/sessions/{}", first["id"].as_str().unwrap()), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "an idle session expires");
    new_game(&expiring, body).await; // room again once the idle ones are gone
}

#[tokio::test]
async fn the_viewer_lists_and_replays_games_with_the_networks_evaluation() {
    let app = app(&config(true));
    let (_, list) = call(&app, "GET", "/api/games", None).await;
    let games = list["games"].as_array().unwrap();
    assert_eq!(games.len(), 4);
    assert!(games[0]["reason"].as_str().unwrap().contains("wins") || games[0]["result"] == "1/2-1/2");
    let (status, game) = call(&app, "GET", "/api/games/1", None).await;
    assert_eq!(status, StatusCode::OK);
    let plies = game["moves"].as_array().unwrap().len();
    assert_eq!(game["white_points"].as_array().unwrap().len(), plies + 1);
    assert_eq!(game["white"], games[1]["white"], "the players' specs");
    // The record's own board, drawn from its points and lines.
    assert_eq!(game["variant"], "nine");
    assert_eq!((game["points"].as_array().unwrap().len(), game["lines"].as_array().unwrap().len()), (24, 32));
    let scores = game["white_score"].as_array().unwrap();
    assert_eq!(scores.len(), plies + 1);
    assert!(scores[..plies].iter().all(|s| s.as_f64().is_some_and(|x| (0.0..=1.0).contains(&x))));
    assert_eq!(scores[plies], Value::Null, "the final position is scored by the result, not the network");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_search_does_not_hold_up_other_sessions() {
    let app = app(&config(true));
    let slow = new_game(&app, json!({"opponent": {"kind": "model", "time_ms": 3000}})).await;
    let fast = new_game(&app, json!({"opponent": {"kind": "minimax", "depth": 1}})).await;
    let slow_id = slow["id"].as_str().unwrap().to_string();
    let started = Instant::now();
    let pending = {
        let app = app.clone();
        tokio::spawn(async move {
            call(&app, "POST", &format!("/api/sessions/{slow_id}/move"), Some(r#"{"move": "d6"}"#)).await
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let fast_id = fast["id"].as_str().unwrap();
    let t = Instant::now();
    let (status, view) =
        call(&app, "POST", &format!("/api/sessions/{fast_id}/move"), Some(r#"{"move": "d6"}"#)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(view["moves"].as_array().unwrap().len(), 2);
    assert!(t.elapsed() < Duration::from_millis(1500), "the fast game answered in {:?}", t.elapsed());
    assert!(!pending.is_finished(), "the slow search was still running");
    let (status, slow_view) = pending.await.unwrap();
    assert_eq!(status, StatusCode::OK);
    assert!(started.elapsed() >= Duration::from_millis(2500));
    assert_eq!(slow_view["moves"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn perfect_play_needs_complete_tables_and_says_what_is_missing() {
    // No tables: the opponent is refused, naming the option.
    let plain = app(&config(false));
    let (_, info) = call(&plain, "GET", "/api/info", None).await;
    assert_eq!((info["tablebase"].clone(), info["perfect"].clone()), (Value::Null, json!(false)));
    let body = json!({"human": "white", "opponent": {"kind": "perfect"}}).to_string();
    let (status, e) = call(&plain, "POST", "/api/sessions", Some(&body)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{e}");
    assert!(e.to_string().contains("--tb DIR"), "{e}");
    // Tables that cannot play from the start (3v3 only): refused, naming what to build.
    let dir = tempfile::tempdir().unwrap();
    morris_env::tablebase::build(dir.path(), 3, &morris_env::Rules::standard(), &|_| {}).unwrap();
    let with = app(&ServeConfig { tablebase: Some(dir.path().to_path_buf()), ..config(false) });
    let (_, info) = call(&with, "GET", "/api/info", None).await;
    assert_eq!(info["perfect"], json!(false), "{info}");
    assert_eq!(info["tablebase"], json!(dir.path().display().to_string()), "{info}");
    let (status, e) = call(&with, "POST", "/api/sessions", Some(&body)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{e}");
    assert!(e.to_string().contains("every sector up to 9v9") && e.to_string().contains("3v3"), "{e}");
    let extra = json!({"opponent": {"kind": "perfect", "depth": 3}}).to_string();
    let (status, _) = call(&with, "POST", "/api/sessions", Some(&extra)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    // A directory that is not there stops the server from starting, naming it.
    let missing = ServeConfig { tablebase: Some(dir.path().join("missing")), ..config(false) };
    let e = App::load(&missing).err().expect("an error");
    assert!(e.to_string().contains("missing"), "{e}");
}
