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
