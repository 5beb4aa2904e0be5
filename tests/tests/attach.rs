//! `hookprof attach` and the runtime's control channel (runtime/src/trace/control.h,
//! docs/recording.md "Attaching and watching live"): a threaded server built with
//! `hookcc --trace`, started with tracing off, attached to and detached from while it serves
//! requests on 127.0.0.1; its traces decoded and compared with its own counters; bad clients;
//! the socket directory's and the peer's checks.

use hookcc_tests::tmux::{pane_showing, pane_until, start_view, tmux, wait_until_quit, TmuxGuard};
use hookcc_tests::{build_traced, call_counts, hookprof, run_ok};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, Stdio};
use std::time::{Duration, Instant};

/// The server, running; killed when dropped (a test that fails leaves nothing behind).
struct Server {
    child: Child,
    port: u16,
    xdg: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn socket(&self) -> PathBuf {
        self.xdg.join("hookcc").join(format!("{}.sock", self.pid()))
    }

    /// `count`: the program's own counters (handle_request calls, background_step calls).
    fn counters(&self) -> (u64, u64) {
        let reply = self.talk(&["count"]);
        let words: Vec<&str> = reply[0].split_whitespace().collect();
        (words[1].parse().unwrap(), words[3].parse().unwrap())
    }

    /// Sends the lines on one connection; returns the replies.
    fn talk(&self, lines: &[&str]) -> Vec<String> {
        let stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connect to the server");
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut writer = stream;
        lines
            .iter()
            .map(|line| {
                writer.write_all(format!("{line}\n").as_bytes()).unwrap();
                let mut reply = String::new();
                reader.read_line(&mut reply).expect("the server replies");
                reply.trim_end().to_string()
            })
            .collect()
    }

    /// `connections` clients at once, `each` requests each, every one answered "ok".
    fn requests(&self, connections: usize, each: usize) {
        std::thread::scope(|s| {
            for _ in 0..connections {
                s.spawn(|| {
                    let replies = self.talk(&vec!["req"; each]);
                    assert!(
                        replies.iter().all(|r| r == "ok"),
                        "a request failed: {replies:?}"
                    );
                });
            }
        });
    }

    /// `quit`, and the program's exit status.
    fn quit(mut self) -> std::process::ExitStatus {
        let _ = self.talk(&["quit"]);
        self.child.wait().unwrap()
    }
}

fn build_server(dir: &Path) -> PathBuf {
    build_traced(
        dir,
        "attach_server",
        &["attach_server.c"],
        &["-O1", "-pthread"],
        false,
    )
}

/// Starts the server with tracing off, its socket under `xdg`, its own trace in `dir`.
fn start_server(dir: &Path, program: &Path, xdg: &Path, env: &[(&str, &str)]) -> Server {
    let mut cmd = Command::new(program);
    cmd.current_dir(dir)
        .env("XDG_RUNTIME_DIR", xdg)
        .env("HOOKCC_DISABLE", "1")
        .env("HOOKCC_OUTPUT", dir.join("own.hktrace"))
        .env("HOOKCC_MAX_BYTES", "20M")
        .env("HOOKCC_SWITCHES", "0")
        .env("HOOKCC_SAMPLE_HZ", "0")
        .env_remove("HOOKCC_CONTROL")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("start the server");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .strip_prefix("port ")
        .unwrap_or_else(|| panic!("the server said {line:?}"))
        .parse()
        .unwrap();
    Server {
        child,
        port,
        xdg: xdg.to_path_buf(),
    }
}

/// A private XDG_RUNTIME_DIR (0700, as a login's is).
fn runtime_dir(parent: &Path) -> PathBuf {
    let xdg = parent.join("xdg");
    std::fs::create_dir(&xdg).unwrap();
    std::fs::set_permissions(&xdg, std::fs::Permissions::from_mode(0o700)).unwrap();
    xdg
}

fn hookprof_in(xdg: &Path) -> Command {
    let mut cmd = hookprof();
    cmd.env("XDG_RUNTIME_DIR", xdg);
    cmd
}

/// `hookprof attach PID ARGS…`, started; returns once it says it records.
fn attach(server: &Server, args: &[&str]) -> (Child, BufReader<ChildStderr>) {
    let mut child = hookprof_in(&server.xdg)
        .arg("attach")
        .arg(server.pid().to_string())
        .args(args)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(
        line.contains("recording into"),
        "hookprof attach said: {line:?}"
    );
    (child, stderr)
}

fn signal(pid: u32, signal: libc::c_int) {
    // SAFETY: kill has no memory preconditions; the pid is a child this test started.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, signal) }, 0);
}

/// Ctrl-C to an attach: it stops the recording and says what it wrote.
fn interrupt(mut child: Child, mut stderr: BufReader<ChildStderr>) -> String {
    signal(child.id(), libc::SIGINT);
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "hookprof attach: {status}\n{rest}");
    rest
}

/// One request on the control socket, as raw bytes; the reply line.
fn control(socket: &Path, bytes: &[u8]) -> String {
    let mut stream = UnixStream::connect(socket).expect("connect to the control socket");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let _ = stream.write_all(bytes);
    let mut reply = String::new();
    let _ = BufReader::new(stream).read_line(&mut reply);
    reply.trim_end().to_string()
}

#[test]
fn three_attaches_record_exactly_the_requests_of_their_windows() {
    let dir = tempfile::tempdir().unwrap();
    let program = build_server(dir.path());
    let xdg = runtime_dir(dir.path());
    let server = start_server(dir.path(), &program, &xdg, &[]);

    let ps = run_ok(hookprof_in(&xdg).arg("ps"));
    let ps = String::from_utf8_lossy(&ps.stdout);
    let row = ps
        .lines()
        .find(|l| l.split_whitespace().next() == Some(&server.pid().to_string()))
        .unwrap_or_else(|| panic!("hookprof ps lists no {}:\n{ps}", server.pid()));
    assert!(
        row.contains("attach_server") && row.contains("trace") && row.contains(" no "),
        "{row}"
    );

    for round in 0..3 {
        server.requests(2, 50); // detached: in no trace
        let (handled_before, background_before) = server.counters();
        let trace = dir.path().join(format!("attach{round}.hktrace"));
        let mut args = vec!["-o", trace.to_str().unwrap()];
        if round == 2 {
            args.extend(["--functions", "handle_request,parse_request"]);
        }
        let (child, stderr) = attach(&server, &args);
        server.requests(4, 100);
        let said = interrupt(child, stderr);
        assert!(said.contains("wrote"), "{said}");
        let (handled_after, background_after) = server.counters();
        assert_eq!(handled_after - handled_before, 400);

        let counts = call_counts(&trace, &[]);
        assert_eq!(
            counts.get("handle_request"),
            Some(&400),
            "round {round}: {counts:?}"
        );
        assert_eq!(
            counts.get("parse_request"),
            Some(&400),
            "round {round}: {counts:?}"
        );
        let steps = counts.get("background_step").copied().unwrap_or(0);
        assert!(
            steps <= background_after - background_before,
            "{steps} background steps"
        );
        if round == 2 {
            assert!(!counts.contains_key("compute") && steps == 0, "{counts:?}");
        } else {
            assert_eq!(counts.get("compute"), Some(&(400 + steps)), "{counts:?}");
        }
        // Every view reads it.
        run_ok(
            hookprof()
                .arg("timeline")
                .arg(&trace)
                .arg("-o")
                .arg(dir.path().join("t.json")),
        );
    }
    // The functions chosen for the last window are the program's own again.
    let status = control(&server.socket(), b"functions\n");
    assert!(
        status.starts_with("ok functions=") && status.contains("chosen="),
        "{status}"
    );

    let socket = server.socket();
    assert!(server.quit().success());
    assert!(!socket.exists(), "the socket is removed at exit");
    // The program's own file (finished at the first attach) decodes, and holds no call: the
    // program recorded only while attached, and no window's records are written twice.
    let mut own = 0;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("own") {
            own += 1;
            let counts = call_counts(&path, &[]);
            assert!(counts.is_empty(), "{name}: {counts:?}");
        }
    }
    assert!(own >= 1, "the program's own trace is still written");
}

#[test]
fn bad_requests_and_vanishing_clients_leave_the_program_running() {
    let dir = tempfile::tempdir().unwrap();
    let program = build_server(dir.path());
    let xdg = runtime_dir(dir.path());
    let server = start_server(dir.path(), &program, &xdg, &[]);
    let socket = server.socket();

    let garbage = control(&socket, b"\x01\x02\xffgarbage\n");
    assert!(garbage.starts_with("error bad request"), "{garbage}");
    let long = control(&socket, &[b'a'; 10000]);
    assert!(long.starts_with("error bad request"), "{long}");
    let unknown = control(&socket, b"frobnicate now\n");
    assert!(unknown.starts_with("error unknown command"), "{unknown}");
    let relative = control(&socket, b"start relative.hktrace\n");
    assert!(
        relative.starts_with("error start needs an absolute path"),
        "{relative}"
    );
    // A request cut off by its client's end: nothing is done.
    let never = dir.path().join("never.hktrace");
    {
        let mut stream = UnixStream::connect(&socket).unwrap();
        stream
            .write_all(format!("start {}", never.display()).as_bytes())
            .unwrap();
    }
    // A client that says nothing: the program serves its requests meanwhile.
    let silent = UnixStream::connect(&socket).unwrap();
    let began = Instant::now();
    server.requests(2, 100);
    assert!(began.elapsed() < Duration::from_secs(20));
    drop(silent);
    let status = control(&socket, b"status\n");
    assert!(status.contains(" recording=0 "), "{status}");
    assert!(!never.exists(), "a cut-off request started a trace");

    // An attach killed while it records: the program goes on; `detach` finishes the file.
    let trace = dir.path().join("killed.hktrace");
    let (child, _stderr) = attach(&server, &["-o", trace.to_str().unwrap()]);
    signal(child.id(), libc::SIGKILL);
    let mut child = child;
    let _ = child.wait();
    server.requests(3, 100);
    let busy = control(&socket, format!("start {}\n", trace.display()).as_bytes());
    assert!(busy.starts_with("error already recording"), "{busy}");
    run_ok(
        hookprof_in(&xdg)
            .arg("detach")
            .arg(server.pid().to_string()),
    );
    let counts = call_counts(&trace, &[]);
    assert_eq!(counts.get("handle_request"), Some(&300), "{counts:?}");

    // A short --duration ends by itself.
    let timed = dir.path().join("timed.hktrace");
    run_ok(
        hookprof_in(&xdg)
            .args([
                "attach",
                &server.pid().to_string(),
                "--duration",
                "300ms",
                "-o",
            ])
            .arg(&timed),
    );
    run_ok(hookprof().arg("info").arg(&timed));
    assert!(server.quit().success());
}

#[test]
fn a_streamed_attach_has_its_window_and_a_client_killed_mid_stream_leaves_the_program_running() {
    let dir = tempfile::tempdir().unwrap();
    let program = build_server(dir.path());
    let xdg = runtime_dir(dir.path());
    let server = start_server(dir.path(), &program, &xdg, &[]);

    // --stream: the records come to hookprof, which writes the trace; exactly the window's.
    server.requests(2, 50);
    let streamed = dir.path().join("streamed.hktrace");
    let (child, stderr) = attach(&server, &["--stream", "-o", streamed.to_str().unwrap()]);
    server.requests(4, 100);
    let said = interrupt(child, stderr);
    assert!(said.contains("wrote"), "{said}");
    let (rows, warnings) = hookcc_tests::report_csv(&streamed, &[]);
    let calls = |name: &str| rows.iter().find(|r| r.function == name).map(|r| r.calls);
    assert_eq!(calls("handle_request"), Some(400), "{warnings}");
    assert_eq!(calls("parse_request"), Some(400), "{warnings}");
    // Finished: the stream's CLOCK chunk ends it (no "incomplete" warning).
    assert!(!warnings.contains("incomplete"), "{warnings}");
    let info = run_ok(hookprof().arg("info").arg(&streamed));
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(
        info.contains("complete:          yes (written as a stream"),
        "{info}"
    );

    // A streaming client killed mid-stream: the program serves on (its writes to the FIFO
    // fail, records counted lost); the client's file decodes with what came before; detach
    // ends the recording.
    let killed = dir.path().join("killed-stream.hktrace");
    let (child, _stderr) = attach(&server, &["--stream", "-o", killed.to_str().unwrap()]);
    // Killed also if the test fails before it does.
    struct KillOnDrop(Child);
    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let child = KillOnDrop(child);
    server.requests(3, 100);
    // The connections' threads write their last buffers as they end: wait until all 300 calls
    // have come through, read from the file while it is being written.
    let handled_in = |trace: &Path| -> Option<u64> {
        let out = hookprof()
            .arg("report")
            .arg(trace)
            .arg("--format=csv")
            .output()
            .ok()?;
        let rows = hookcc_tests::parse_report_csv(&String::from_utf8_lossy(&out.stdout));
        let row = rows.into_iter().find(|r| r.function == "handle_request");
        row.filter(|_| out.status.success()).map(|r| r.calls)
    };
    let began = Instant::now();
    while handled_in(&killed) != Some(300) {
        assert!(
            began.elapsed() < Duration::from_secs(20),
            "{:?} calls of handle_request came",
            handled_in(&killed)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(child); // SIGKILL
    server.requests(3, 100);
    let (handled, _) = server.counters();
    assert_eq!(handled, 100 + 400 + 300 + 300);
    let counts = call_counts(&killed, &[]);
    assert_eq!(counts.get("handle_request"), Some(&300), "{counts:?}");
    run_ok(
        hookprof_in(&xdg)
            .arg("detach")
            .arg(server.pid().to_string()),
    );
    let status = control(&server.socket(), b"status\n");
    assert!(status.contains(" recording=0 "), "{status}");
    server.requests(1, 10);
    assert!(server.quit().success());
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("own")
        {
            call_counts(&path, &[]); // decodes
        }
    }
}

/// Whether this test runs as root (it needs to act as another user).
fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn a_socket_directory_others_may_enter_is_refused_and_so_is_another_users_client() {
    let dir = tempfile::tempdir().unwrap();
    let program = build_server(dir.path());

    // Mode 0755: refused, said once; the program runs as before.
    let xdg = runtime_dir(dir.path());
    let hookcc_dir = xdg.join("hookcc");
    std::fs::create_dir(&hookcc_dir).unwrap();
    std::fs::set_permissions(&hookcc_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut server = start_server(dir.path(), &program, &xdg, &[]);
    server.requests(1, 10);
    assert!(!server.socket().exists());
    let ps = run_ok(hookprof_in(&xdg).arg("ps"));
    let ps = String::from_utf8_lossy(&ps.stdout);
    let pid = server.pid().to_string();
    assert!(
        !ps.lines()
            .any(|l| l.split_whitespace().next() == Some(&pid)),
        "{ps}"
    );
    let _ = server.talk(&["quit"]);
    let out = std::mem::replace(&mut server.child, Command::new("true").spawn().unwrap());
    let out = out.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no control channel: refusing the socket directory"),
        "{stderr}"
    );

    // HOOKCC_CONTROL=0: none.
    std::fs::set_permissions(&hookcc_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let server = start_server(dir.path(), &program, &xdg, &[("HOOKCC_CONTROL", "0")]);
    assert!(!server.socket().exists());
    assert!(server.quit().success());

    if !is_root() {
        eprintln!("skipping the other user's checks: not root");
        return;
    }
    // Owned by another user, 0700: refused.
    std::os::unix::fs::chown(&hookcc_dir, Some(65534), None).unwrap();
    let server = start_server(dir.path(), &program, &xdg, &[]);
    assert!(!server.socket().exists());
    assert!(server.quit().success());
    std::os::unix::fs::chown(&hookcc_dir, Some(0), None).unwrap();

    // Another user's client, the directories opened to it on purpose: refused by the peer's
    // credentials, and nothing changes.
    let server = start_server(dir.path(), &program, &xdg, &[]);
    let socket = server.socket();
    for (path, mode) in [
        (dir.path(), 0o711),
        (&xdg, 0o711),
        (&hookcc_dir, 0o711),
        (&socket, 0o666),
    ] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let client = format!(
        "import socket; s = socket.socket(socket.AF_UNIX); s.connect({:?}); \
         exec(\"try: s.sendall(b'enable\\\\n')\\nexcept OSError: pass\"); \
         print(s.recv(4096).decode())",
        socket.to_str().unwrap()
    );
    // As uid and gid 65534: std's spawn sets them (and, as root, clears the supplementary
    // groups) with no user lookup, where setpriv read the name service (libnss-systemd on a
    // machine that has it, which a new one does not). Debian's own python3: a user's pyenv
    // shims under /root are not the other user's.
    let out = run_ok(
        Command::new("/usr/bin/python3")
            .args(["-c", &client])
            .uid(65534)
            .gid(65534),
    );
    let reply = String::from_utf8_lossy(&out.stdout);
    assert!(reply.starts_with("error permission denied"), "{reply}");
    let status = control(&socket, b"status\n");
    assert!(status.contains(" recording=0 "), "{status}");
    assert!(server.quit().success());
}

#[test]
fn an_attach_to_a_ring_or_a_profile_takes_a_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let program = build_server(dir.path());
    let xdg = runtime_dir(dir.path());
    for mode in ["ring", "profile"] {
        let server = start_server(
            dir.path(),
            &program,
            &xdg,
            &[("HOOKCC_MODE", mode), ("HOOKCC_DISABLE", "0")],
        );
        server.requests(1, 100);
        let trace = dir.path().join(format!("{mode}.hktrace"));
        let out = run_ok(
            hookprof_in(&xdg)
                .args([
                    "attach",
                    &server.pid().to_string(),
                    "--duration",
                    "200ms",
                    "-o",
                ])
                .arg(&trace),
        );
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            said.contains(&format!("a snapshot of the {mode}")),
            "{said}"
        );
        // A snapshot's file is unfinished: no clock rate yet on x86 (columns in ticks).
        let csv = run_ok(hookprof().arg("report").arg(&trace).arg("--format=csv"));
        let csv = String::from_utf8_lossy(&csv.stdout);
        let row = csv
            .lines()
            .find(|l| l.starts_with("handle_request,"))
            .unwrap_or_else(|| panic!("{mode}: no handle_request in\n{csv}"));
        assert_eq!(row.split(',').nth(1), Some("100"), "{mode}: {row}");
        // start and stop are for the default mode.
        let refused = control(&server.socket(), b"stop\n");
        assert!(
            refused.starts_with("error this process records in a ring or a profile"),
            "{refused}"
        );
        assert!(server.quit().success());
    }
}

/// Stops a load thread when dropped: a panic inside `thread::scope` would otherwise wait
/// for it forever.
struct StopOnDrop<'a>(&'a std::sync::atomic::AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(false, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Runs `view` while another thread keeps sending `server` requests (2 connections, `each`
/// requests on each, over and over); the load stops when `view` returns or panics.
fn under_load(server: &Server, each: usize, view: impl FnOnce()) {
    let load = std::sync::atomic::AtomicBool::new(true);
    std::thread::scope(|s| {
        let _stop = StopOnDrop(&load);
        s.spawn(|| {
            while load.load(std::sync::atomic::Ordering::Relaxed) {
                server.requests(2, each);
            }
        });
        view();
    });
}

#[test]
fn top_shows_the_live_functions_sorts_filters_and_quits_in_tmux() {
    if !hookcc_tests::have_tool("tmux", &["-V"], "tmux") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let program = build_server(dir.path());
    let xdg = runtime_dir(dir.path());
    let server = start_server(dir.path(), &program, &xdg, &[]);
    let tmux_server = format!("hookcc-top-test-{}", std::process::id());
    let _tmux = TmuxGuard(tmux_server.clone());
    let command = format!(
        "XDG_RUNTIME_DIR={} {} top {} --interval 300ms --windows 3",
        xdg.display(),
        hookcc_tests::tool("hookprof").display(),
        server.pid()
    );
    start_view(&tmux_server, (120, 40), &command);
    under_load(&server, 50, || {
        let pane = pane_showing(&tmux_server, "handle_request");
        assert!(
            pane.contains("sorted by self time") && pane.contains("parse_request"),
            "{pane}"
        );
        tmux(&tmux_server, &["send-keys", "-t", "top", "c"]);
        pane_showing(&tmux_server, "sorted by calls");
        tmux(
            &tmux_server,
            &[
                "send-keys",
                "-t",
                "top",
                "/",
                "p",
                "a",
                "r",
                "s",
                "e",
                "Enter",
            ],
        );
        let pane = pane_showing(&tmux_server, "filter: parse");
        let rows: Vec<&str> = pane
            .lines()
            .skip_while(|l| !l.contains("function"))
            .skip(1)
            .take_while(|l| !l.trim().is_empty())
            .collect();
        assert!(
            !rows.is_empty() && rows.iter().all(|r| r.contains("parse_request")),
            "{pane}"
        );
        tmux(&tmux_server, &["send-keys", "-t", "top", "q"]);
        wait_until_quit(&tmux_server, "top");
    });
    tmux(&tmux_server, &["kill-server"]);
    let status = control(&server.socket(), b"status\n");
    assert!(
        status.contains(" recording=0 "),
        "top leaves recording off: {status}"
    );
    assert!(server.quit().success());
}

#[test]
fn tui_browses_the_call_tree_folds_searches_and_shows_callers_in_tmux() {
    if !hookcc_tests::have_tool("tmux", &["-V"], "tmux") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let program = build_traced(dir.path(), "calls", &["calls.c"], &["-O1"], false);
    let (trace, _) = hookcc_tests::run_traced(dir.path(), &program, &[]);
    let tmux_server = format!("hookcc-tui-test-{}", std::process::id());
    let _tmux = TmuxGuard(tmux_server.clone());
    let command = format!(
        "{} tui {}",
        hookcc_tests::tool("hookprof").display(),
        trace.display()
    );
    start_view(&tmux_server, (160, 30), &command);
    // The report beside the tree, the tree folded at main.
    let pane = pane_showing(&tmux_server, "hookprof tui: call tree");
    assert!(pane.contains("+ main") && pane.contains("1973"), "{pane}");
    assert!(!pane.contains("- fib"), "{pane}");
    // Expanded: main's callees (fib, with most of the time; the trivial functions' calls at
    // -O1 may take no measurable time, and a path of no time is not in the folded stacks).
    tmux(&tmux_server, &["send-keys", "-t", "top", "l"]);
    let pane = pane_showing(&tmux_server, "- main");
    assert!(pane.contains("+ fib"), "{pane}");
    // Folded again.
    tmux(&tmux_server, &["send-keys", "-t", "top", "h"]);
    pane_showing(&tmux_server, "+ main");
    // Search: the cursor on the first `fib`, its caller expanded.
    tmux(
        &tmux_server,
        &["send-keys", "-t", "top", "/", "f", "i", "b", "Enter"],
    );
    let pane = pane_showing(&tmux_server, "search: fib");
    let cursor = pane
        .lines()
        .find(|l| l.starts_with('>'))
        .unwrap_or_default();
    assert!(cursor.contains("fib") && pane.contains("- main"), "{pane}");
    // Its callers: fib at the root, main among the callers under it (fib too: it recurses).
    tmux(&tmux_server, &["send-keys", "-t", "top", "c"]);
    let pane = pane_showing(&tmux_server, "hookprof tui: callers");
    let tree: Vec<&str> = pane
        .lines()
        .skip(1)
        .map(|l| &l[..l.len().min(100)])
        .collect();
    let at = tree
        .iter()
        .position(|l| l.starts_with('>') && l.contains("- fib"));
    let at = at.unwrap_or_else(|| panic!("{pane}"));
    assert!(
        tree[at + 1..].iter().take(3).any(|l| l.contains("main")),
        "{pane}"
    );
    tmux(&tmux_server, &["send-keys", "-t", "top", "q"]);
    wait_until_quit(&tmux_server, "tui");
    tmux(&tmux_server, &["kill-server"]);
}

#[test]
fn top_follows_a_trace_being_written_in_tmux() {
    if !hookcc_tests::have_tool("tmux", &["-V"], "tmux") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let program = build_server(dir.path());
    let xdg = runtime_dir(dir.path());
    // Recording from the start, small buffers: the file grows while the program runs.
    let server = start_server(
        dir.path(),
        &program,
        &xdg,
        &[("HOOKCC_DISABLE", "0"), ("HOOKCC_BUFFER_RECORDS", "1024")],
    );
    let trace = dir.path().join("own.hktrace");
    let tmux_server = format!("hookcc-follow-test-{}", std::process::id());
    let _tmux = TmuxGuard(tmux_server.clone());
    let command = format!(
        "{} top --follow {} --interval 300ms --windows 3",
        hookcc_tests::tool("hookprof").display(),
        trace.display()
    );
    start_view(&tmux_server, (120, 40), &command);
    under_load(&server, 200, || {
        // The requests, and the background thread's loop open at the end of what was written
        // (once that thread's first buffer of 1024 records is in the file).
        let pane = pane_until(
            &tmux_server,
            "handle_request and an open background_main",
            |p| {
                let open = p
                    .split("open at the last window's end")
                    .nth(1)
                    .unwrap_or_default();
                p.contains("handle_request") && open.contains("background_main")
            },
        );
        assert!(
            pane.contains(&format!("hookprof top: {}", trace.display())),
            "{pane}"
        );
        tmux(&tmux_server, &["send-keys", "-t", "top", "q"]);
        wait_until_quit(&tmux_server, "top");
    });
    tmux(&tmux_server, &["kill-server"]);
    assert!(server.quit().success());
}
