//! Where `--out` writes. `bpc compose` replaces a file and `bpc render` a directory,
//! each whole: through a symbolic link to its target, keeping a file's mode, writing
//! a device in place and `-` to stdout; a socket, a directory or a path below a file
//! is refused with a message that says why. A render killed at any instant leaves the
//! old tree or the new one, never a mix, and the next run removes what dead runs left.

use crate::common::*;

#[cfg(unix)]
#[test]
fn out_keeps_mode_and_follows_symlinks() {
    use std::os::unix::fs::PermissionsExt;
    let dir = simple();
    let target = dir.path().join("real.yaml");
    std::fs::write(&target, "old").expect("write");
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    std::os::unix::fs::symlink("real.yaml", dir.path().join("link.yaml")).expect("symlink");

    let out = bpc(dir.path(), &["compose", "--out", "link.yaml"]);
    assert!(out.success(), "{}", out.stderr);
    let link = std::fs::symlink_metadata(dir.path().join("link.yaml")).expect("link");
    assert!(link.file_type().is_symlink(), "the symlink was replaced");
    let text = std::fs::read_to_string(&target).expect("read");
    assert_eq!(masked(dir.path(), &text), SIMPLE);
    let mode = std::fs::metadata(&target)
        .expect("meta")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600, "mode not kept");
    // No temp file is left behind.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("ls")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["_template", "link.yaml", "real.yaml", "windsor.yaml"]
    );
}

#[cfg(unix)]
#[test]
fn out_writes_devices_in_place_and_dash_is_stdout() {
    use std::os::unix::fs::FileTypeExt;
    let dir = simple();
    let out = bpc(dir.path(), &["compose", "--out", "/dev/null"]);
    assert!(out.success(), "{}", out.stderr);
    let meta = std::fs::metadata("/dev/null").expect("meta");
    assert!(meta.file_type().is_char_device(), "/dev/null was replaced");

    let out = bpc(dir.path(), &["compose", "--out", "-"]);
    assert!(out.success(), "{}", out.stderr);
    assert_eq!(out.stdout, SIMPLE);
    assert!(!dir.path().join("-").exists());

    // A new file gets an ordinary mode, not the temp file's 0600.
    let out = bpc(dir.path(), &["compose", "--out", "new.yaml"]);
    assert!(out.success(), "{}", out.stderr);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(dir.path().join("new.yaml"))
        .expect("meta")
        .permissions()
        .mode();
    assert_ne!(mode & 0o044, 0, "mode {mode:o}");
}

#[cfg(unix)]
#[test]
fn out_refuses_sockets_and_directories() {
    let dir = simple();
    let sock = dir.path().join("s.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).expect("bind");
    let out = bpc(dir.path(), &["compose", "--out", "s.sock"]);
    assert!(!out.success());
    assert_eq!(
        out.stderr,
        indoc! {"
        error: cannot write s.sock: is a socket; refusing to write the blueprint there

    "}
    );
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&sock)
        .expect("meta")
        .file_type()
        .is_socket());

    std::fs::create_dir(dir.path().join("d")).expect("mkdir");
    let out = bpc(dir.path(), &["compose", "--out", "d"]);
    assert!(!out.success());
    assert_eq!(
        out.stderr,
        indoc! {"
        error: cannot write d: is a directory

    "}
    );
}

#[cfg(unix)]
#[test]
fn render_and_compose_both_follow_an_out_link() {
    let dir = small();
    let real = dir.path().join("real");
    let link = dir.path().join("link");
    std::os::unix::fs::symlink("real", &link).expect("link");
    let run = bpc(dir.path(), &["render", "--out", s(&link)]);
    assert!(run.success(), "{}", run.stderr);
    assert!(std::fs::symlink_metadata(&link)
        .expect("link")
        .file_type()
        .is_symlink());
    assert!(real.join("terraform/c0/terraform.tfvars.json").is_file());
    // Rendered again over the link: still a link, the target replaced.
    std::fs::write(
        dir.path().join("_template/facets/app.yaml"),
        components(1, "two"),
    )
    .expect("edit");
    assert!(bpc(dir.path(), &["render", "--out", s(&link)]).success());
    assert!(std::fs::symlink_metadata(&link)
        .expect("link")
        .file_type()
        .is_symlink());
    assert!(!real.join("terraform/c1").exists());
    let check = bpc(dir.path(), &["render", "--check", "--out", s(&link)]);
    assert!(check.success(), "{}", check.stdout);
    // compose follows the same way.
    let file_link = dir.path().join("bp.yaml");
    std::os::unix::fs::symlink("bp-real.yaml", &file_link).expect("link");
    assert!(bpc(dir.path(), &["compose", "--out", s(&file_link)]).success());
    assert!(dir.path().join("bp-real.yaml").is_file());
    assert!(std::fs::symlink_metadata(&file_link)
        .expect("link")
        .file_type()
        .is_symlink());
}

/// A small xorshift generator: the kill delays vary from run to run (seeded from the
/// clock, printed on failure).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[cfg(unix)]
#[test]
fn render_survives_random_kills_whole() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        ("_template/facets/app.yaml", &components(60, "old")),
    ]);
    let out = dir.path().join("r");
    let run = bpc(dir.path(), &["render", "--out", s(&out)]);
    assert!(run.success(), "{}", run.stderr);
    let old = bpc::render::write::read_tree(&out).expect("old tree");
    // The new tree, rendered elsewhere once.
    std::fs::write(
        dir.path().join("_template/facets/app.yaml"),
        components(60, "new"),
    )
    .expect("edit");
    let reference = dir.path().join("reference");
    assert!(bpc(dir.path(), &["render", "--out", s(&reference)]).success());
    let new = bpc::render::write::read_tree(&reference).expect("new tree");
    assert_ne!(old, new);
    // How long a whole render takes, to spread the kills over it.
    let start = std::time::Instant::now();
    assert!(bpc(dir.path(), &["render", "--out", s(&reference)]).success());
    let span = start.elapsed().as_micros().max(1000) as u64;
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        | 1;
    let mut rng = Rng(seed);
    let (mut saw_old, mut saw_new) = (0, 0);
    for round in 0..40 {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_bpc"))
            .args(["render", "--out", s(&out)])
            .current_dir(dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        std::thread::sleep(std::time::Duration::from_micros(rng.next() % span));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let now = bpc::render::write::read_tree(&out)
            .unwrap_or_else(|e| panic!("seed {seed} round {round}: {e}"));
        if now == old {
            saw_old += 1;
        } else if now == new {
            saw_new += 1;
        } else {
            panic!(
                "seed {seed} round {round}: {} holds neither tree ({} files)",
                out.display(),
                now.len()
            );
        }
        // Back to the old tree every other round, so kills land on both swaps.
        if round % 2 == 1 && now == new {
            std::fs::write(
                dir.path().join("_template/facets/app.yaml"),
                components(60, "old"),
            )
            .expect("edit");
            assert!(bpc(dir.path(), &["render", "--out", s(&out)]).success());
            std::fs::write(
                dir.path().join("_template/facets/app.yaml"),
                components(60, "new"),
            )
            .expect("edit");
        }
    }
    eprintln!("seed {seed}: old {saw_old}, new {saw_new}");
    // A last run completes and removes what the killed ones left.
    assert!(bpc(dir.path(), &["render", "--out", s(&out)]).success());
    assert_eq!(bpc::render::write::read_tree(&out).expect("tree"), new);
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .expect("ls")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    left.sort();
    assert_eq!(left, ["_template", "r", "reference", "windsor.yaml"]);
}

#[cfg(unix)]
#[test]
fn leftovers_of_dead_runs_are_removed_and_live_ones_kept() {
    let dir = small();
    let out = dir.path().join("r");
    // A pid that cannot be alive (above the kernel's maximum) and our own parent's.
    let dead = dir.path().join(".r.bpc-new-4194304999");
    let dead_old = dir.path().join(".r.bpc-old-4194304998");
    let live = dir
        .path()
        .join(format!(".r.bpc-new-{}", std::process::id()));
    for d in [&dead, &dead_old, &live] {
        std::fs::create_dir_all(d.join("terraform")).expect("mkdir");
    }
    assert!(bpc(dir.path(), &["render", "--out", s(&out)]).success());
    assert!(!dead.exists());
    assert!(!dead_old.exists());
    assert!(live.exists(), "a live process's temp dir was removed");
}

#[cfg(unix)]
#[test]
fn out_below_a_file_and_dangling_links_are_explained() {
    let dir = small();
    std::fs::write(dir.path().join("plain"), "x").expect("file");
    let run = bpc(dir.path(), &["render", "--out", "plain/r"]);
    assert_eq!(run.status, Some(1));
    assert_eq!(
        run.stderr,
        indoc! {"
        error: cannot write plain/r: plain is a file, not a directory, so nothing can be created below it

    "}
    );
    let run = bpc(dir.path(), &["compose", "--out", "plain/bp.yaml"]);
    assert_eq!(run.status, Some(1));
    assert_eq!(
        run.stderr,
        indoc! {"
        error: cannot write plain/bp.yaml: plain is a file, not a directory, so nothing can be created below it

    "}
    );
    std::os::unix::fs::symlink("missing/bp.yaml", dir.path().join("dangling")).expect("link");
    let run = bpc(dir.path(), &["compose", "--out", "dangling"]);
    assert_eq!(run.status, Some(1));
    assert_eq!(
        run.stderr,
        indoc! {"
        error: cannot write dangling: dangling is a symbolic link to missing/bp.yaml, and its directory missing does not exist

    "}
    );
    // render creates the directory a dangling link points to.
    std::os::unix::fs::symlink("made", dir.path().join("rlink")).expect("link");
    let run = bpc(dir.path(), &["render", "--out", "rlink"]);
    assert!(run.success(), "{}", run.stderr);
    assert!(dir.path().join("made/.bpc-render").is_file());
}
