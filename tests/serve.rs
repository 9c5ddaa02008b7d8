//! End-to-end tests of `eval serve`, the real binary: it prints its address and answers over
//! HTTP, and a bad model, games file or port fails at start with the path or address named.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn eval(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_eval")).args(args).output().expect("run eval")
}

/// One HTTP/1.1 request over a plain socket; returns the status line and the body.
fn http(addr: &str, request: &str) -> (String, String) {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.write_all(request.as_bytes()).expect("send");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("read");
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    (head.lines().next().unwrap_or_default().to_string(), body.to_string())
}

#[test]
fn serve_prints_its_address_and_answers_over_http() {
    let games = concat!(env!("CARGO_MANIFEST_DIR"), "/web/tests/data/games.jsonl");
    let mut child = Command::new(env!("CARGO_BIN_EXE_eval"))
        .args(["serve", "--no-model", "--port", "0", "--games", games])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start eval serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("first line");
    let server = Server(child);
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    assert!(addr.starts_with("127.0.0.1:"), "localhost by default: {addr}");
    assert!(line.contains("no model") && line.contains("4 games"), "{line}");

    let (status, body) = http(&addr, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert!(status.contains("200"), "{status}");
    assert!(body.contains("<svg id=\"board\""));
    let new = r#"{"opponent": {"kind": "minimax", "depth": 1}}"#;
    let (status, body) = http(
        &addr,
        &format!(
            "POST /api/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{new}",
            new.len()
        ),
    );
    assert!(status.contains("201"), "{status} {body}");
    assert!(body.contains("\"legal\":[\"a7\""), "{body}");
    let bad = r#"{"move": 5}"#;
    let (status, body) = http(
        &addr,
        &format!(
            "POST /api/sessions/1/move HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{bad}",
            bad.len()
        ),
    );
    assert!(status.contains("400"), "{status}");
    assert!(body.contains("\"error\""), "{body}");
    drop(server);
}

#[test]
fn serve_fails_at_start_naming_a_bad_model_games_file_or_address() {
    let out = eval(&["serve", "--model", "/no/such/model", "--port", "0"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/no/such/model"));

    let out = eval(&["serve", "--no-model", "--port", "0", "--games", "/no/such/games.jsonl"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/no/such/games.jsonl"));

    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = taken.local_addr().expect("address").port().to_string();
    let out = eval(&["serve", "--no-model", "--port", &port]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("127.0.0.1:{port}")), "{err}");
}
