//! The web board in a real browser: headless Chromium driven over WebDriver (chromedriver) plays
//! a short game by clicking points, checks that an illegal click is refused with a message, that
//! the model answers, that undo works, opens the viewer on a checked-in game file, and saves
//! screenshots to `target/browser/`.
//!
//! Needs Debian's `chromium` and `chromium-driver` (`.ci/run` installs them); run it with
//! `cargo test -p morris-web --test browser -- --ignored`.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use morris_web::{App, ServeConfig};
use serde_json::json;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// chromedriver on a free port, killed when dropped.
struct Driver(Child, u16);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_driver() -> Driver {
    let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
    let binary = std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into());
    let child = Command::new(&binary)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {binary} (install Debian's chromium-driver): {e}"));
    let driver = Driver(child, port);
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "chromedriver did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    driver
}

async fn text(c: &Client, css: &str) -> String {
    c.find(Locator::Css(css)).await.unwrap_or_else(|e| panic!("{css}: {e}")).text().await.unwrap_or_default()
}

async fn count(c: &Client, css: &str) -> usize {
    c.find_all(Locator::Css(css)).await.map_or(0, |v| v.len())
}

/// Polls `check` until it holds (or fails the test after `secs`).
async fn until<F, Fut>(what: &str, secs: u64, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn click(c: &Client, css: &str) {
    c.find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .click()
        .await
        .unwrap_or_else(|e| panic!("click {css}: {e}"));
}

/// Starts a game of `variant` (the opponent as set: minimax) and checks its board, `(points,
/// lines)`, with `corner` in the bottom-right corner of the square; then places on `first` and
/// waits for the answer, after which White has `in_hand` left.
async fn small_board_game(
    c: &Client,
    variant: &str,
    (points, lines): (usize, usize),
    corner: &str,
    first: &str,
    in_hand: u8,
) {
    click(c, &format!("#variant option[value={variant}]")).await;
    click(c, "#new").await;
    until(&format!("a game of {variant}"), 20, || async {
        count(c, "#board line").await == lines && count(c, "#moves li").await == 0
    })
    .await;
    assert_eq!(count(c, "#board circle.point").await, points);
    let pt = c.find(Locator::Css(&format!("#board-pt-{corner}"))).await.expect("the corner point");
    let (cx, cy) = (pt.attr("cx").await.unwrap(), pt.attr("cy").await.unwrap());
    assert_eq!((cx.as_deref(), cy.as_deref()), (Some("650"), Some("650")));
    click(c, &format!("#board-pt-{first}")).await;
    until("minimax's answer", 30, || async { count(c, "#moves li").await == 2 }).await;
    assert_eq!(text(c, "#moves li:nth-child(1)").await, first);
    let status = text(c, "#status").await;
    assert!(status.contains(&format!("in hand {in_hand} / ")), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Debian's chromium and chromium-driver; .ci/run runs it with --ignored"]
async fn play_undo_and_view_games_in_headless_chromium() {
    let config = ServeConfig {
        model: Some(repo().join("checkpoints/shipped")),
        games: vec![repo().join("web/tests/data/games.jsonl")],
        port: 0,
        ..ServeConfig::default()
    };
    let app = Arc::new(App::load(&config).expect("app"));
    let (listener, addr) = morris_web::bind(&config).await.expect("bind");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(morris_web::serve(listener, app, async {
        let _ = stopped.await;
    }));

    let driver = start_driver();
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()),
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--disable-quic", "--no-first-run", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync", "--window-size=1200,1000"]
        }),
    );
    let c = ClientBuilder::rustls()
        .expect("TLS setup")
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{}", driver.1))
        .await
        .expect("connect to chromedriver");
    let shots = repo().join("target/browser");
    std::fs::create_dir_all(&shots).expect("screenshot directory");

    c.goto(&format!("http://{addr}/")).await.expect("open the page");
    // A quick opponent: the model with 16 simulations.
    until("the page's first game", 20, || async {
        text(&c, "#status").await.contains("White (you) to place")
    })
    .await;
    let strength = c.find(Locator::Css("#strength")).await.unwrap();
    strength.clear().await.unwrap();
    strength.send_keys("16").await.unwrap();
    click(&c, "#new").await;
    until("a new game", 20, || async {
        count(&c, "#moves li").await == 0 && text(&c, "#status").await.contains("(you)")
    })
    .await;

    // White places on d6 by clicking the point; the model answers with its evaluation.
    click(&c, "#board-pt-d6").await;
    until("the model's answer", 30, || async { count(&c, "#moves li").await == 2 }).await;
    assert!(c.find(Locator::Css("#board-piece-d6.white")).await.is_ok(), "the white piece is drawn on d6");
    let engine = text(&c, "#engine").await;
    assert!(engine.contains("played") && engine.contains("PV") && engine.contains("W "), "{engine}");
    let answer = text(&c, "#moves li:nth-child(2)").await;

    // Clicking the model's piece is not a legal placement: refused with a message, nothing sent.
    click(&c, &format!("#board-pt-{answer}")).await;
    until("the refusal", 5, || async { text(&c, "#message").await.contains("not a legal placement") }).await;
    assert_eq!(count(&c, "#moves li").await, 2);

    // Undo takes back both moves; then two more moves for the screenshot.
    click(&c, "#undo").await;
    until("the undo", 10, || async { count(&c, "#moves li").await == 0 }).await;
    for point in ["d6", "f4"] {
        let before = count(&c, "#moves li").await;
        let free = c.find(Locator::Css(&format!("#board-piece-{point}"))).await.is_err();
        let target = if free { point.to_string() } else { "b4".to_string() };
        click(&c, &format!("#board-pt-{target}")).await;
        until("the model's answer", 30, || async { count(&c, "#moves li").await == before + 2 }).await;
    }
    std::fs::write(shots.join("play.png"), c.screenshot().await.expect("screenshot")).expect("save play.png");

    // Twelve men's morris: choosing it switches the opponent to minimax (the model plays nine),
    // the new game's board has the diagonals (40 lines), and a placement gets minimax's answer.
    assert_eq!(count(&c, "#board line").await, 32);
    click(&c, "#variant option[value=twelve]").await;
    let opponent = c.find(Locator::Css("#opponent")).await.unwrap().prop("value").await.unwrap();
    assert_eq!(opponent.as_deref(), Some("minimax"));
    click(&c, "#new").await;
    until("a game of twelve men's morris", 20, || async {
        count(&c, "#board line").await == 40 && count(&c, "#moves li").await == 0
    })
    .await;
    click(&c, "#board-pt-a7").await;
    until("minimax's answer", 30, || async { count(&c, "#moves li").await == 2 }).await;
    let status = text(&c, "#status").await;
    assert!(status.contains("to place") && status.contains("in hand 11 / 11"), "{status}");
    std::fs::write(shots.join("twelve.png"), c.screenshot().await.expect("screenshot"))
        .expect("save twelve.png");

    // Lasker morris: while placing, a click on one's own piece selects it and a click on an
    // empty neighbour slides it there.
    click(&c, "#variant option[value=lasker]").await;
    click(&c, "#new").await;
    until("a game of Lasker morris", 20, || async {
        count(&c, "#board line").await == 32 && count(&c, "#moves li").await == 0
    })
    .await;
    click(&c, "#board-pt-a7").await;
    until("minimax's answer", 30, || async { count(&c, "#moves li").await == 2 }).await;
    let to = if c.find(Locator::Css("#board-piece-d7")).await.is_err() { "d7" } else { "a4" };
    click(&c, "#board-pt-a7").await;
    click(&c, &format!("#board-pt-{to}")).await;
    until("the slide and its answer", 30, || async { count(&c, "#moves li").await == 4 }).await;
    assert_eq!(text(&c, "#moves li:nth-child(3)").await, format!("a7-{to}"));
    let status = text(&c, "#status").await;
    assert!(status.contains("in hand 9 / "), "{status}");

    // Six men's morris: its 16 points and 20 lines spread over the same square (e1 in the
    // corner where nine's g1 is), and a placement gets minimax's answer.
    small_board_game(&c, "six", (16, 20), "e1", "c4", 5).await;
    std::fs::write(shots.join("six.png"), c.screenshot().await.expect("screenshot")).expect("save six.png");
    // Three men's morris: its 9 points and 16 lines (the diagonals through the centre) on the
    // same square (c1 in the corner), and a placement in the centre gets minimax's answer.
    small_board_game(&c, "three", (9, 16), "c1", "b2", 2).await;
    std::fs::write(shots.join("three.png"), c.screenshot().await.expect("screenshot"))
        .expect("save three.png");

    // The viewer: the checked-in games, stepped through with the evaluation curve.
    click(&c, "#tab-games").await;
    until("the games list", 10, || async { count(&c, "#game-list tr.row").await == 4 }).await;
    click(&c, "#game-1").await;
    until("the replay", 20, || async { text(&c, "#ply").await.starts_with("ply 0 /") }).await;
    for _ in 0..12 {
        click(&c, "#next").await;
    }
    until("twelve steps", 5, || async { text(&c, "#ply").await.starts_with("ply 12 /") }).await;
    let info = text(&c, "#replay-info").await;
    assert!(info.contains(" vs ") && info.contains("expected score") && info.contains("minimax"), "{info}");
    let curve = c
        .find(Locator::Css("#curve polyline"))
        .await
        .unwrap()
        .attr("points")
        .await
        .unwrap()
        .unwrap_or_default();
    assert!(curve.split_whitespace().count() > 10, "the evaluation curve has points: {curve}");
    std::fs::write(shots.join("games.png"), c.screenshot().await.expect("screenshot"))
        .expect("save games.png");

    c.close().await.expect("close the browser");
    let _ = stop.send(());
    server.await.expect("server task").expect("server");
}
