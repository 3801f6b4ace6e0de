//! A read-only tree of files: a directory on disk, or a `.tar.gz`/`.tgz` archive read
//! whole into memory (never unpacked). Paths inside a tree are relative, `/`-separated
//! strings such as `facets/provider-aws.yaml`; nothing outside the root is reachable:
//! `..` past the root, absolute paths and (on disk) symlinks that lead outside are refused.
//! Archives may not contain links, devices or unsafe paths at all.

use flate2::read::GzDecoder;
use std::collections::HashMap;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Largest total uncompressed size of an archive (a guard against gzip bombs),
/// enforced while the bytes are decompressed.
const MAX_ARCHIVE_BYTES: u64 = 64 * 1024 * 1024;
/// Largest single file read from a template: 16 MiB, the expression engine's string
/// limit, since `file()` turns a file into one string (the engine asserts the two
/// agree; the file layer sits below it and does not look up). Checked before reading.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeErrorKind {
    NotFound,
    /// The path leaves the root (`..`, absolute, or a symlink pointing outside).
    OutsideRoot,
    /// The archive is malformed or holds something bpc refuses to read.
    BadArchive,
    /// A FIFO, device, socket or directory where a file was expected.
    NotRegular,
    /// Larger than the per-file limit.
    TooLarge,
    Io,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeError {
    pub kind: TreeErrorKind,
    /// The path as the caller wrote it (or the archive entry).
    pub path: String,
    pub message: String,
}

impl TreeError {
    fn new(kind: TreeErrorKind, path: &str, message: impl Into<String>) -> TreeError {
        TreeError {
            kind,
            path: path.to_string(),
            message: message.into(),
        }
    }
}

impl fmt::Display for TreeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for TreeError {}

/// Directories already resolved and checked (see [`FileTree::read_text`]), by the
/// root they were checked against and their path under it, each held open: files
/// are opened relative to the directory itself, so renaming or replacing it by a
/// symlink afterwards leads nowhere else. Kept for one load, not longer; at most
/// [`OPEN_DIRS`] are held, and files of further directories are read the checked way.
#[derive(Debug, Default)]
pub struct ResolvedDirs(Mutex<HashMap<DirKey, Option<Arc<std::fs::File>>>>);

/// The root a directory was checked against, and its path under that root.
type DirKey = (PathBuf, String);

/// How many directories a [`ResolvedDirs`] holds open at most.
#[cfg(unix)]
const OPEN_DIRS: usize = 64;

#[derive(Clone, Debug)]
pub struct FileTree {
    /// How the root is named in messages (the directory or archive path as given).
    display_root: String,
    /// A sub-tree's position inside the full tree (`""` or `dir/`).
    prefix: String,
    backing: Backing,
    /// Files that stand for the backing's (full tree path → contents): an editor's
    /// unsaved documents, laid over the directory by the language server.
    overlay: Option<Arc<FileOverlay>>,
}

/// Contents by full tree path, read in place of the backing's files.
pub type FileOverlay = BTreeMap<String, Arc<[u8]>>;

#[derive(Clone, Debug)]
enum Backing {
    Dir { root: PathBuf },
    Archive(Arc<ArchiveFiles>),
}

#[derive(Debug, Default)]
struct ArchiveFiles {
    files: BTreeMap<String, Arc<[u8]>>,
    dirs: BTreeSet<String>,
    /// Files are named as in a directory (`root/path`), not as in an archive
    /// (`root!path`): the files of a commit, which a reader finds at those paths.
    named_as_dir: bool,
}

impl FileTree {
    /// Opens a directory, or an archive when the name ends in `.tar.gz` or `.tgz`.
    pub fn open(path: &Path) -> Result<FileTree, TreeError> {
        let shown = path.display().to_string();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
            let file = open_regular(path, &shown, None)?;
            let files = read_archive(std::io::BufReader::new(file), &shown, MAX_ARCHIVE_BYTES)?;
            Ok(FileTree {
                display_root: shown,
                prefix: String::new(),
                overlay: None,
                backing: Backing::Archive(Arc::new(files)),
            })
        } else {
            FileTree::from_dir(path)
        }
    }

    pub(crate) fn from_dir(path: &Path) -> Result<FileTree, TreeError> {
        let shown = path.display().to_string();
        let root = path.canonicalize().map_err(|e| io_error(&shown, &e))?;
        if !root.is_dir() {
            return Err(TreeError::new(
                TreeErrorKind::Io,
                &shown,
                "is not a directory",
            ));
        }
        Ok(FileTree {
            display_root: shown,
            prefix: String::new(),
            overlay: None,
            backing: Backing::Dir { root },
        })
    }

    /// Reads a gzip-compressed tar archive held in memory (the tests' way in; `open`
    /// streams archives from disk).
    #[cfg(test)]
    fn from_archive(gzipped: &[u8], display_root: &str) -> Result<FileTree, TreeError> {
        FileTree::from_archive_capped(gzipped, display_root, MAX_ARCHIVE_BYTES)
    }

    /// As [`FileTree::from_archive`] with another cap on the uncompressed size.
    #[cfg(test)]
    fn from_archive_capped(
        gzipped: &[u8],
        display_root: &str,
        cap: u64,
    ) -> Result<FileTree, TreeError> {
        let files = read_archive(gzipped, display_root, cap)?;
        Ok(FileTree {
            display_root: display_root.to_string(),
            prefix: String::new(),
            overlay: None,
            backing: Backing::Archive(Arc::new(files)),
        })
    }

    /// A tree of files held in memory (tree path → contents), like an archive; for
    /// embedders and the fuzz driver. Unsafe paths are refused as in archives.
    pub fn from_files(
        files: impl IntoIterator<Item = (String, Vec<u8>)>,
        display_root: &str,
    ) -> Result<FileTree, TreeError> {
        let mut archive = ArchiveFiles::default();
        for (path, data) in files {
            let normal = normalize(&path)
                .map_err(|m| TreeError::new(TreeErrorKind::OutsideRoot, &path, m))?;
            for (i, _) in normal.match_indices('/') {
                archive.dirs.insert(normal[..i].to_string());
            }
            archive.files.insert(normal, Arc::from(data));
        }
        Ok(FileTree {
            display_root: display_root.to_string(),
            prefix: String::new(),
            overlay: None,
            backing: Backing::Archive(Arc::new(archive)),
        })
    }

    /// As [`FileTree::from_files`], the files named as a directory's are
    /// (`root/path`): the files of a commit, which a reader finds at those paths in
    /// the repository.
    pub fn from_files_named_as_dir(
        files: impl IntoIterator<Item = (String, Vec<u8>)>,
        display_root: &str,
    ) -> Result<FileTree, TreeError> {
        let mut tree = FileTree::from_files(files, display_root)?;
        if let Backing::Archive(archive) = &mut tree.backing {
            if let Some(archive) = Arc::get_mut(archive) {
                archive.named_as_dir = true;
            }
        }
        Ok(tree)
    }

    /// The tree rooted at directory `dir` of this one (e.g. an archive's `_template/`).
    /// Paths of the sub-tree cannot reach outside it.
    pub fn subtree(&self, dir: &str) -> Result<FileTree, TreeError> {
        let dir = normalize(dir).map_err(|m| TreeError::new(TreeErrorKind::OutsideRoot, dir, m))?;
        if !self.is_dir(&dir) {
            return Err(TreeError::new(
                TreeErrorKind::NotFound,
                &dir,
                "no such directory",
            ));
        }
        let mut tree = self.clone();
        if !dir.is_empty() {
            tree.prefix = format!("{}{dir}/", self.prefix);
        }
        Ok(tree)
    }

    /// This tree with `overlay`'s files (paths relative to this tree's root) read in
    /// place of its own; a path only the overlay holds is a file too, and is listed.
    pub fn with_overlay(&self, overlay: &FileOverlay) -> FileTree {
        let mut tree = self.clone();
        let full: FileOverlay = overlay
            .iter()
            .filter_map(|(path, data)| Some((self.full(&normalize(path).ok()?), data.clone())))
            .collect();
        tree.overlay = Some(Arc::new(full));
        tree
    }

    fn overlaid(&self, normal: &str) -> Option<Arc<[u8]>> {
        self.overlay.as_ref()?.get(&self.full(normal)).cloned()
    }

    /// How to name `path` in a message: `root/path`, or `archive.tgz!path` for archives.
    pub fn describe(&self, path: &str) -> String {
        let mut shown = String::new();
        self.describe_into(path, &mut shown);
        shown
    }

    /// [`FileTree::describe`] written over `shown`, so that naming many files reuses
    /// one buffer.
    pub fn describe_into(&self, path: &str, shown: &mut String) {
        let plain = match &self.backing {
            Backing::Dir { .. } => true,
            Backing::Archive(archive) => archive.named_as_dir,
        };
        let (root, separator) = match plain {
            true => match self.display_root.trim_end_matches('/') {
                "" | "." => ("", ""),
                root => (root, "/"),
            },
            false => (self.display_root.as_str(), "!"),
        };
        let parts = [root, separator, &self.prefix, path];
        shown.clear();
        shown.reserve(parts.iter().map(|p| p.len()).sum());
        parts.iter().for_each(|p| shown.push_str(p));
    }

    /// Names the root differently in messages (bpc shows paths relative to the project).
    pub fn set_display_root(&mut self, root: impl Into<String>) {
        self.display_root = root.into();
    }

    /// The directory on disk this tree reads, if it is not an archive.
    pub fn root_dir(&self) -> Option<PathBuf> {
        match &self.backing {
            Backing::Dir { root } => Some(root.join(self.prefix.trim_end_matches('/'))),
            Backing::Archive(_) => None,
        }
    }

    pub fn exists(&self, path: &str) -> bool {
        self.is_file(path) || self.is_dir(path)
    }

    pub fn is_file(&self, path: &str) -> bool {
        let Ok(path) = normalize(path) else {
            return false;
        };
        if self.overlaid(&path).is_some() {
            return true;
        }
        match &self.backing {
            Backing::Dir { .. } => self.disk_path(&path).is_ok_and(|p| p.is_file()),
            Backing::Archive(a) => a.files.contains_key(&self.full(&path)),
        }
    }

    pub fn is_dir(&self, path: &str) -> bool {
        let Ok(path) = normalize(path) else {
            return false;
        };
        match &self.backing {
            Backing::Dir { .. } => self.disk_path(&path).is_ok_and(|p| p.is_dir()),
            Backing::Archive(a) => {
                let full = self.full(&path);
                if full.is_empty() {
                    return true;
                }
                let as_dir = format!("{}/", full.trim_end_matches('/'));
                a.dirs.contains(full.trim_end_matches('/'))
                    || a.files
                        .range(as_dir.clone()..)
                        .next()
                        .is_some_and(|(k, _)| k.starts_with(&as_dir))
            }
        }
    }

    /// Every file under directory `dir` (recursively), as tree paths in byte-wise order.
    /// A missing directory lists as empty.
    pub fn list(&self, dir: &str) -> Result<Vec<String>, TreeError> {
        Ok(self.list_noting_links(dir)?.0)
    }

    /// As [`FileTree::list`], and whether a symlink was followed on the way (a file
    /// listed may then stand for a file elsewhere in the tree).
    pub fn list_noting_links(&self, dir: &str) -> Result<(Vec<String>, bool), TreeError> {
        let dir = normalize(dir).map_err(|m| TreeError::new(TreeErrorKind::OutsideRoot, dir, m))?;
        let mut links = false;
        let mut found = match &self.backing {
            Backing::Dir { root } => self.list_disk(root, &dir, &mut links)?,
            Backing::Archive(a) => {
                let full = self.full(&dir);
                let start = if full.is_empty() {
                    String::new()
                } else {
                    format!("{full}/")
                };
                a.files
                    .range(start.clone()..)
                    .take_while(|(k, _)| k.starts_with(&start))
                    .map(|(k, _)| k[self.prefix.len()..].to_string())
                    .collect()
            }
        };
        if let Some(overlay) = &self.overlay {
            let start = self.full(&dir);
            let start = if start.is_empty() {
                String::new()
            } else {
                format!("{start}/")
            };
            let extra = overlay
                .range(start.clone()..)
                .take_while(|(k, _)| k.starts_with(&start))
                .map(|(k, _)| k[self.prefix.len()..].to_string());
            found.extend(extra);
        }
        found.sort_unstable();
        found.dedup();
        Ok((found, links))
    }

    /// Whether the editor's overlay holds `path` (it then is a file of the tree,
    /// whatever the disk says).
    pub fn is_overlaid(&self, path: &str) -> bool {
        normalize(path).is_ok_and(|p| self.overlaid(&p).is_some())
    }

    pub fn read(&self, path: &str) -> Result<Arc<[u8]>, TreeError> {
        let normal =
            normalize(path).map_err(|m| TreeError::new(TreeErrorKind::OutsideRoot, path, m))?;
        if let Some(data) = self.overlaid(&normal) {
            if data.len() as u64 > MAX_FILE_BYTES {
                return Err(too_large(path, data.len() as u64));
            }
            return Ok(data);
        }
        match &self.backing {
            Backing::Dir { .. } => {
                let disk = self.disk_path(&normal)?;
                let mut file = open_regular(&disk, path, Some(MAX_FILE_BYTES))?;
                let mut data = Vec::new();
                // The size was checked; a file growing meanwhile still stops at the cap.
                (&mut file)
                    .take(MAX_FILE_BYTES + 1)
                    .read_to_end(&mut data)
                    .map_err(|e| io_error(path, &e))?;
                if data.len() as u64 > MAX_FILE_BYTES {
                    return Err(too_large(path, data.len() as u64));
                }
                Ok(Arc::from(data))
            }
            Backing::Archive(a) => {
                let data =
                    a.files.get(&self.full(&normal)).cloned().ok_or_else(|| {
                        TreeError::new(TreeErrorKind::NotFound, path, "no such file")
                    })?;
                if data.len() as u64 > MAX_FILE_BYTES {
                    return Err(too_large(path, data.len() as u64));
                }
                Ok(data)
            }
        }
    }

    pub fn read_to_string(&self, path: &str) -> Result<String, TreeError> {
        let bytes = self.read(path)?;
        utf8_text(bytes.to_vec()).map_err(|why| TreeError::new(TreeErrorKind::Io, path, why))
    }

    /// The text of `path`, as [`FileTree::read_to_string`] reads it (the same checks,
    /// errors and limits), shared and copied once. For reading many files of a few
    /// directories (a template's facets): `dirs` remembers each directory resolved and
    /// checked, so a plain file in it costs `lstat`, `open` and the reads, where
    /// resolving its whole path again cost a `readlink` per component. Anything else
    /// (a symlink, a FIFO, a file too large, any error) goes the way of `read`.
    pub fn read_text(&self, path: &str, dirs: &ResolvedDirs) -> Result<Arc<str>, TreeError> {
        let bytes = match self.read_plain(path, dirs) {
            Some(bytes) => bytes,
            None => self.read(path)?.to_vec(),
        };
        let text = utf8_text(bytes).map_err(|why| TreeError::new(TreeErrorKind::Io, path, why))?;
        Ok(Arc::from(text))
    }

    /// `path` read directly when it is a regular file, not a symlink, in a directory
    /// of the tree resolved once; `None` for everything else.
    #[cfg(unix)]
    fn read_plain(&self, path: &str, dirs: &ResolvedDirs) -> Option<Vec<u8>> {
        use std::os::fd::{AsRawFd, FromRawFd};
        use std::os::unix::fs::OpenOptionsExt;
        let Backing::Dir { root } = &self.backing else {
            return None;
        };
        let normal = normalize(path).ok()?;
        if self.overlaid(&normal).is_some() {
            return None;
        }
        let (dir, name) = normal.rsplit_once('/').unwrap_or(("", &normal));
        if name.is_empty() {
            return None;
        }
        let dir_file = {
            let mut known = dirs.0.lock().unwrap_or_else(|p| p.into_inner());
            let key = (root.join(&self.prefix), dir.to_string());
            match known.get(&key) {
                Some(open) => open.clone()?,
                None if known.len() >= OPEN_DIRS => return None,
                None => {
                    // Canonical and inside the (sub-)tree's root, then opened without
                    // following a symlink put there since: or not usable here.
                    let open = self.disk_path(dir).ok().and_then(|real| {
                        std::fs::OpenOptions::new()
                            .read(true)
                            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
                            .open(real)
                            .ok()
                            .map(Arc::new)
                    });
                    known.insert(key, open.clone());
                    open?
                }
            }
        };
        let name = std::ffi::CString::new(name).ok()?;
        // SAFETY: `stat` is plain data, valid when zeroed.
        let mut meta: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: an open directory, a NUL-terminated name, a valid place for the
        // result. Not following a last component that is a symlink: that one is
        // resolved and checked by `read`, as every other case.
        let found = unsafe {
            libc::fstatat(
                dir_file.as_raw_fd(),
                name.as_ptr(),
                &mut meta,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if found != 0
            || meta.st_mode & libc::S_IFMT != libc::S_IFREG
            || meta.st_size as u64 > MAX_FILE_BYTES
        {
            return None;
        }
        // A file replaced meanwhile by a symlink fails to open (`O_NOFOLLOW`), by a
        // FIFO does not block (`O_NONBLOCK`).
        // SAFETY: as for `fstatat`; the descriptor returned is owned by `file` alone.
        let file = unsafe {
            let fd = libc::openat(
                dir_file.as_raw_fd(),
                name.as_ptr(),
                libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC,
            );
            if fd < 0 {
                return None;
            }
            std::fs::File::from_raw_fd(fd)
        };
        let mut data = Vec::with_capacity(meta.st_size as usize + 1);
        file.take(MAX_FILE_BYTES + 1).read_to_end(&mut data).ok()?;
        (data.len() as u64 <= MAX_FILE_BYTES).then_some(data)
    }

    #[cfg(not(unix))]
    fn read_plain(&self, _path: &str, _dirs: &ResolvedDirs) -> Option<Vec<u8>> {
        None
    }

    /// Resolves `relative` against the directory of tree file `from`; the result must stay
    /// inside the tree. Absolute paths are refused.
    pub fn resolve(&self, from: &str, relative: &str) -> Result<String, TreeError> {
        if relative.starts_with('/') || relative.starts_with('\\') || has_drive(relative) {
            return Err(TreeError::new(
                TreeErrorKind::OutsideRoot,
                relative,
                "absolute paths are not allowed; use a path relative to the file",
            ));
        }
        let base = from.rsplit_once('/').map_or("", |(dir, _)| dir);
        let joined = if base.is_empty() {
            relative.to_string()
        } else {
            format!("{base}/{relative}")
        };
        normalize(&joined).map_err(|m| TreeError::new(TreeErrorKind::OutsideRoot, relative, m))
    }

    /// The path inside the whole tree (sub-trees add their prefix).
    fn full(&self, path: &str) -> String {
        if path.is_empty() {
            self.prefix.trim_end_matches('/').to_string()
        } else {
            format!("{}{path}", self.prefix)
        }
    }

    /// Where `path` can be read again to show it in a message: its path on disk, for a
    /// directory tree and a file no overlay stands for; `None` otherwise (see
    /// [`crate::files::FileMap::holding`]).
    pub fn to_read_again(&self, path: &str) -> Option<PathBuf> {
        let Backing::Dir { root } = &self.backing else {
            return None;
        };
        let normal = normalize(path).ok()?;
        if self.overlaid(&normal).is_some() {
            return None;
        }
        Some(root.join(self.full(&normal)))
    }

    /// The on-disk path of a tree path, refusing symlinks that resolve outside the root.
    fn disk_path(&self, path: &str) -> Result<PathBuf, TreeError> {
        let Backing::Dir { root } = &self.backing else {
            return Err(TreeError::new(
                TreeErrorKind::Io,
                path,
                "not a directory tree",
            ));
        };
        let full = self.full(path);
        let joined = root.join(&full);
        let real = joined.canonicalize().map_err(|e| io_error(path, &e))?;
        let sub_root = root.join(&self.prefix);
        if !real.starts_with(&sub_root) {
            return Err(TreeError::new(
                TreeErrorKind::OutsideRoot,
                path,
                "is a symlink that leads outside the template root",
            ));
        }
        Ok(real)
    }

    fn list_disk(
        &self,
        root: &Path,
        dir: &str,
        links: &mut bool,
    ) -> Result<Vec<String>, TreeError> {
        let sub_root = root.join(&self.prefix);
        let start = match self.disk_path(dir) {
            Ok(p) if p.is_dir() => {
                // The directory itself reached through a symlink.
                *links |= p != sub_root.join(dir);
                p
            }
            Ok(_) => return Ok(Vec::new()),
            Err(e) if e.kind == TreeErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut found = Vec::new();
        let mut visited = BTreeSet::new();
        let mut pending = vec![(start, dir.to_string())];
        while let Some((disk, tree)) = pending.pop() {
            if !visited.insert(disk.clone()) {
                continue; // a symlink loop
            }
            let entries = std::fs::read_dir(&disk).map_err(|e| io_error(&tree, &e))?;
            for entry in entries {
                let entry = entry.map_err(|e| io_error(&tree, &e))?;
                let name = entry.file_name();
                let Some(name) = name.to_str() else {
                    return Err(TreeError::new(
                        TreeErrorKind::Io,
                        &format!("{tree}/{}", name.to_string_lossy()),
                        "file name is not valid UTF-8",
                    ));
                };
                let child = if tree.is_empty() {
                    name.to_string()
                } else {
                    format!("{tree}/{name}")
                };
                let kind = entry.file_type().map_err(|e| io_error(&child, &e))?;
                // `disk` is canonical, so only a symlink needs resolving: canonicalizing
                // every entry cost one `readlink` per path component, per file.
                let (real, is_dir) = if kind.is_symlink() {
                    *links = true;
                    let real = entry
                        .path()
                        .canonicalize()
                        .map_err(|e| io_error(&child, &e))?;
                    if !real.starts_with(&sub_root) {
                        return Err(TreeError::new(
                            TreeErrorKind::OutsideRoot,
                            &child,
                            "is a symlink that leads outside the template root",
                        ));
                    }
                    let is_dir = real.is_dir();
                    (real, is_dir)
                } else {
                    (entry.path(), kind.is_dir())
                };
                if is_dir {
                    pending.push((real, child));
                } else {
                    found.push(child);
                }
            }
        }
        Ok(found)
    }
}

fn io_error(path: &str, err: &std::io::Error) -> TreeError {
    let kind = if err.kind() == std::io::ErrorKind::NotFound {
        TreeErrorKind::NotFound
    } else {
        TreeErrorKind::Io
    };
    TreeError::new(kind, path, err.to_string())
}

fn too_large(path: &str, size: u64) -> TreeError {
    TreeError::new(
        TreeErrorKind::TooLarge,
        path,
        format!(
            "is {size} bytes, more than the limit of {MAX_FILE_BYTES} bytes for one template file"
        ),
    )
}

/// What kind of non-regular file `meta` describes, for messages.
fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    let kind = meta.file_type();
    if kind.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
    }
    "not a regular file"
}

/// `bytes` as text, or where they stop being UTF-8: `is not valid UTF-8 text (line 3,
/// column 7: byte 0xff)`, the column counted in characters as in every diagnostic.
pub fn utf8_text(bytes: Vec<u8>) -> Result<String, String> {
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let before = &bytes[..at];
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let line_start = before
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&before[line_start..])
            .chars()
            .count()
            + 1;
        format!(
            "is not valid UTF-8 text (line {line}, column {column}: byte 0x{:02x})",
            bytes[at]
        )
    })
}

/// Opens `disk` for reading only if it is a regular file (opening a FIFO would block
/// until a writer came, reading a device may never end) and, with `max`, no larger
/// than that. `shown` names it in errors.
pub fn open_regular(
    disk: &Path,
    shown: &str,
    max: Option<u64>,
) -> Result<std::fs::File, TreeError> {
    let meta = std::fs::metadata(disk).map_err(|e| io_error(shown, &e))?;
    if !meta.is_file() {
        return Err(TreeError::new(
            TreeErrorKind::NotRegular,
            shown,
            format!("is {}; only regular files are read", file_kind(&meta)),
        ));
    }
    if let Some(max) = max {
        if meta.len() > max {
            return Err(too_large(shown, meta.len()));
        }
    }
    std::fs::File::open(disk).map_err(|e| io_error(shown, &e))
}

fn has_drive(path: &str) -> bool {
    let b = path.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

/// `a/./b/../c/` → `a/c`; an error when `..` climbs above the root or the path is
/// absolute.
fn normalize(path: &str) -> Result<String, String> {
    if path.starts_with('/') {
        return Err("absolute paths are not allowed".to_string());
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err("the path leaves the template root".to_string());
                }
            }
            _ => parts.push(part),
        }
    }
    Ok(parts.join("/"))
}

/// Counts decompressed bytes and fails the read as soon as they pass the cap, so a
/// small archive of zeros costs at most the cap, never its full expansion.
struct Capped<R> {
    inner: R,
    read: u64,
    cap: u64,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if self.read > self.cap {
            return Err(std::io::Error::other(cap_message(self.cap)));
        }
        Ok(n)
    }
}

fn cap_message(cap: u64) -> String {
    format!(
        "the archive holds more than {cap} bytes ({} MiB) uncompressed, the limit for a template archive",
        cap / (1024 * 1024)
    )
}

fn read_archive(gzipped: impl Read, name: &str, cap: u64) -> Result<ArchiveFiles, TreeError> {
    let bad =
        |path: &str, message: String| TreeError::new(TreeErrorKind::BadArchive, path, message);
    let decoder = Capped {
        inner: GzDecoder::new(gzipped),
        read: 0,
        cap,
    };
    let mut archive = tar::Archive::new(decoder);
    let mut files = ArchiveFiles::default();
    let mut total: u64 = 0;
    let entries = archive
        .entries()
        .map_err(|e| bad(name, format!("cannot read archive: {e}")))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| bad(name, format!("cannot read archive: {e}")))?;
        let raw = entry.path_bytes();
        let Ok(raw) = std::str::from_utf8(&raw).map(str::to_string) else {
            return Err(bad(name, "an entry name is not valid UTF-8".to_string()));
        };
        if raw.starts_with('/') || raw.split('/').any(|p| p == "..") || has_drive(&raw) {
            return Err(bad(
                &raw,
                "archive entry has an absolute path or `..`; refusing the archive".to_string(),
            ));
        }
        let path = normalize(&raw).map_err(|m| bad(&raw, m))?;
        let kind = entry.header().entry_type();
        use tar::EntryType as T;
        match kind {
            T::Regular | T::Continuous => {
                // The header's size is checked before any of the entry is read.
                let size = entry.size();
                total = total.saturating_add(size);
                if total > cap {
                    return Err(bad(
                        &raw,
                        format!("entry of {size} bytes: {}", cap_message(cap)),
                    ));
                }
                // Two entries for one path: which one a reader keeps differs between
                // tools (the last for tar, the first for some), so the archive is
                // ambiguous and refused.
                if files.files.contains_key(&path) || files.dirs.contains(&path) {
                    return Err(bad(
                        &raw,
                        format!("the archive holds `{path}` more than once; refusing the ambiguous archive"),
                    ));
                }
                let mut data = Vec::new();
                entry
                    .read_to_end(&mut data)
                    .map_err(|e| bad(&raw, format!("cannot read entry: {e}")))?;
                files.files.insert(path, Arc::from(data));
            }
            T::Directory => {
                if files.files.contains_key(&path) {
                    return Err(bad(
                        &raw,
                        format!("the archive holds `{path}` as a file and as a directory; refusing the ambiguous archive"),
                    ));
                }
                if !path.is_empty() {
                    files.dirs.insert(path);
                }
            }
            T::XGlobalHeader | T::XHeader | T::GNULongName | T::GNULongLink => {}
            T::Symlink | T::Link => {
                return Err(bad(
                    &raw,
                    "archive entry is a link; links are not allowed in templates".to_string(),
                ))
            }
            _ => {
                return Err(bad(
                    &raw,
                    "archive entry is not a regular file or directory".to_string(),
                ))
            }
        }
    }
    // Directories implied by file paths.
    let implied: Vec<String> = files
        .files
        .keys()
        .flat_map(|k| {
            k.match_indices('/')
                .map(|(i, _)| k[..i].to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    files.dirs.extend(implied);
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::GzEncoder;
    use flate2::Compression;
    use std::io::Write;

    fn archive(entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::fast()));
        for (path, kind, data) in entries {
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(*kind);
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            // set_path refuses `..`; write the raw name to test our own checks.
            let name = header.as_old_mut().name.as_mut();
            name[..path.len()].copy_from_slice(path.as_bytes());
            if *kind == tar::EntryType::Symlink {
                let _ = header.set_link_name("target");
            }
            header.set_cksum();
            builder.append(&header, *data).expect("append");
        }
        let encoder = builder.into_inner().expect("tar");
        encoder.finish().expect("gzip")
    }

    #[test]
    fn an_overlay_stands_for_files_and_adds_new_ones() {
        let tree = sample().subtree("_template").expect("subtree");
        let mut files = FileOverlay::new();
        files.insert("facets/a.yaml".into(), Arc::from(&b"edited"[..]));
        files.insert("facets/new.yaml".into(), Arc::from(&b"new"[..]));
        let overlaid = tree.with_overlay(&files);
        assert_eq!(&*overlaid.read("facets/a.yaml").expect("a"), b"edited");
        assert_eq!(&*overlaid.read("facets/b.yaml").expect("b"), b"b");
        assert!(overlaid.is_file("facets/new.yaml"));
        let listed = overlaid.list("facets").expect("list");
        assert_eq!(
            listed,
            [
                "facets/a.yaml",
                "facets/b.yaml",
                "facets/new.yaml",
                "facets/sub/c.yaml"
            ]
        );
        // The tree it came from is unchanged.
        assert_eq!(&*tree.read("facets/a.yaml").expect("a"), b"a");
        assert!(!tree.is_file("facets/new.yaml"));
    }

    fn sample() -> FileTree {
        let bytes = archive(&[
            ("./_template/", tar::EntryType::Directory, b""),
            ("./_template/facets/b.yaml", tar::EntryType::Regular, b"b"),
            ("./_template/facets/a.yaml", tar::EntryType::Regular, b"a"),
            (
                "./_template/facets/sub/c.yaml",
                tar::EntryType::Regular,
                b"c",
            ),
            ("./_template/facets-x.yaml", tar::EntryType::Regular, b"x"),
            ("./_template/schema.yaml", tar::EntryType::Regular, b"s"),
        ]);
        FileTree::from_archive(&bytes, "t.tgz").expect("archive")
    }

    #[test]
    fn files_named_as_a_directory_describe_as_paths_a_reader_can_open() {
        let files = [(
            "contexts/_template/facets/a.yaml".to_string(),
            b"a".to_vec(),
        )];
        let tree = FileTree::from_files_named_as_dir(files.clone(), "infra").expect("tree");
        let template = tree.subtree("contexts/_template").expect("subtree");
        assert_eq!(
            template.describe("facets/a.yaml"),
            "infra/contexts/_template/facets/a.yaml"
        );
        assert_eq!(&*template.read("facets/a.yaml").expect("read"), b"a");
        // At the repository's root the name is the path alone; an archive's keeps `!`.
        let at_root = FileTree::from_files_named_as_dir(files.clone(), ".").expect("tree");
        assert_eq!(
            at_root.describe("contexts/_template/facets/a.yaml"),
            "contexts/_template/facets/a.yaml"
        );
        let archive = FileTree::from_files(files, "t.tgz").expect("tree");
        assert_eq!(archive.describe("x.yaml"), "t.tgz!x.yaml");
    }

    #[test]
    fn archive_listing_and_reading() {
        let tree = sample();
        assert!(tree.is_dir("_template"));
        let template = tree.subtree("_template").expect("subtree");
        assert_eq!(
            template.list("facets").expect("list"),
            ["facets/a.yaml", "facets/b.yaml", "facets/sub/c.yaml"]
        );
        assert_eq!(
            template.list("missing").expect("list"),
            Vec::<String>::new()
        );
        assert_eq!(&*template.read("facets/a.yaml").expect("read"), b"a");
        assert_eq!(template.read_to_string("schema.yaml").expect("read"), "s");
        assert!(template.is_file("facets/../schema.yaml"));
        assert!(!template.is_file("../_template/schema.yaml"));
        assert_eq!(
            template.read("nope.yaml").map_err(|e| e.kind),
            Err(TreeErrorKind::NotFound)
        );
        assert_eq!(
            template.read("../x").map_err(|e| e.kind),
            Err(TreeErrorKind::OutsideRoot)
        );
        assert_eq!(
            template.describe("facets/a.yaml"),
            "t.tgz!_template/facets/a.yaml"
        );
        assert_eq!(template.list("").expect("all").len(), 5);
    }

    #[test]
    fn archive_refuses_duplicate_entries() {
        let bytes = archive(&[
            ("facets/a.yaml", tar::EntryType::Regular, b"one"),
            ("facets/./a.yaml", tar::EntryType::Regular, b"two"),
        ]);
        let err = FileTree::from_archive(&bytes, "dup.tgz").expect_err("duplicate");
        assert!(err.to_string().contains("more than once"), "{err}");
        let bytes = archive(&[
            ("facets/a.yaml", tar::EntryType::Regular, b"one"),
            ("facets/a.yaml", tar::EntryType::Directory, b""),
        ]);
        let err = FileTree::from_archive(&bytes, "dup.tgz").expect_err("file and dir");
        assert!(
            err.to_string().contains("as a file and as a directory"),
            "{err}"
        );
    }

    #[test]
    fn archive_refuses_unsafe_entries() {
        for (path, kind) in [
            ("../evil.yaml", tar::EntryType::Regular),
            ("/etc/passwd", tar::EntryType::Regular),
            ("a/../../b", tar::EntryType::Regular),
            ("link", tar::EntryType::Symlink),
            ("hard", tar::EntryType::Link),
            ("dev", tar::EntryType::Char),
        ] {
            let bytes = archive(&[(path, kind, b"")]);
            let err = FileTree::from_archive(&bytes, "bad.tgz").expect_err(path);
            assert_eq!(err.kind, TreeErrorKind::BadArchive, "{path}");
        }
        let err = FileTree::from_archive(b"not gzip", "x.tgz").expect_err("garbage");
        assert_eq!(err.kind, TreeErrorKind::BadArchive);
    }

    #[test]
    fn archive_cap_is_enforced_as_bytes_arrive() {
        // 1 MiB of zeros compresses to about a kilobyte; the header says so up front.
        let zeros = vec![0u8; 1024 * 1024];
        let bytes = archive(&[("big.yaml", tar::EntryType::Regular, &zeros)]);
        assert!(bytes.len() < 16 * 1024);
        let err = FileTree::from_archive_capped(&bytes, "bomb.tgz", 64 * 1024).expect_err("cap");
        assert_eq!(err.kind, TreeErrorKind::BadArchive);
        assert!(err.message.contains("65536 bytes"), "{err}");
        // Many entries each under the cap add up.
        let parts: Vec<(String, Vec<u8>)> = (0..8)
            .map(|i| (format!("f{i}.yaml"), vec![b'x'; 16 * 1024]))
            .collect();
        let entries: Vec<(&str, tar::EntryType, &[u8])> = parts
            .iter()
            .map(|(n, d)| (n.as_str(), tar::EntryType::Regular, d.as_slice()))
            .collect();
        let err = FileTree::from_archive_capped(&archive(&entries), "many.tgz", 64 * 1024)
            .expect_err("cap");
        assert!(
            err.message.contains("limit for a template archive"),
            "{err}"
        );
    }

    #[test]
    fn resolve_stays_inside() {
        let tree = sample();
        assert_eq!(
            tree.resolve("facets/a.yaml", "../configs/x.yaml"),
            Ok("configs/x.yaml".to_string())
        );
        assert_eq!(tree.resolve("top.yaml", "./x/./y"), Ok("x/y".to_string()));
        for bad in ["../../x", "/etc/passwd", "C:/x"] {
            assert_eq!(
                tree.resolve("facets/a.yaml", bad).map_err(|e| e.kind),
                Err(TreeErrorKind::OutsideRoot),
                "{bad}"
            );
        }
    }

    #[test]
    fn directory_tree() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("tpl");
        std::fs::create_dir_all(root.join("facets/sub")).expect("mkdir");
        std::fs::write(root.join("facets/z.yaml"), "z").expect("write");
        std::fs::write(root.join("facets/B.yaml"), "B").expect("write");
        std::fs::write(root.join("facets/sub/a.yaml"), "a").expect("write");
        std::fs::write(dir.path().join("secret"), "s").expect("write");
        let tree = FileTree::open(&root).expect("open");
        assert_eq!(
            tree.list("facets").expect("list"),
            ["facets/B.yaml", "facets/sub/a.yaml", "facets/z.yaml"]
        );
        assert_eq!(tree.read_to_string("facets/z.yaml").expect("read"), "z");
        assert_eq!(
            tree.read("../secret").map_err(|e| e.kind),
            Err(TreeErrorKind::OutsideRoot)
        );
        assert!(tree.list("missing").expect("list").is_empty());

        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("secret"), root.join("facets/leak.yaml"))
                .expect("symlink");
            assert_eq!(
                tree.read("facets/leak.yaml").map_err(|e| e.kind),
                Err(TreeErrorKind::OutsideRoot)
            );
            assert_eq!(
                tree.list("facets").map_err(|e| e.kind),
                Err(TreeErrorKind::OutsideRoot)
            );
            std::fs::remove_file(root.join("facets/leak.yaml")).expect("rm");
            std::os::unix::fs::symlink(root.join("facets"), root.join("facets/sub/loop"))
                .expect("symlink");
            assert_eq!(tree.list("facets").expect("list").len(), 3);
        }
    }

    /// `read_text` (a directory resolved once per load) reads what `read_to_string`
    /// reads and refuses what it refuses, with the same errors.
    #[cfg(unix)]
    #[test]
    fn read_text_agrees_with_read_to_string() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path();
        let root = base.join("tpl");
        std::fs::create_dir_all(root.join("facets/sub")).expect("mkdir");
        std::fs::create_dir_all(root.join("shared")).expect("mkdir");
        std::fs::create_dir_all(base.join("outside")).expect("mkdir");
        std::fs::write(root.join("facets/a.yaml"), "a: 1\n").expect("write");
        std::fs::write(root.join("facets/sub/b.yaml"), "b: 2\n").expect("write");
        std::fs::write(root.join("shared/c.yaml"), "c: 3\n").expect("write");
        std::fs::write(root.join("facets/bad.yaml"), b"x: \xff\n").expect("write");
        std::fs::write(base.join("outside/secret.yaml"), "s: 1\n").expect("write");
        symlink("../shared/c.yaml", root.join("facets/rel.yaml")).expect("link");
        symlink(root.join("shared/c.yaml"), root.join("facets/abs.yaml")).expect("link");
        symlink(
            base.join("outside/secret.yaml"),
            root.join("facets/leak.yaml"),
        )
        .expect("link");
        symlink("../shared", root.join("facets/linked")).expect("link");
        symlink(base.join("outside"), root.join("facets/out")).expect("link");
        symlink("nowhere.yaml", root.join("facets/dangling.yaml")).expect("link");
        let big = std::fs::File::create(root.join("facets/big.yaml")).expect("create");
        big.set_len(MAX_FILE_BYTES + 1).expect("sparse file");
        let fifo = root.join("facets/pipe.yaml");
        let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("path");
        // SAFETY: a valid NUL-terminated path; mkfifo only creates the node.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0, "mkfifo");
        let paths = [
            "facets/a.yaml",
            "facets/sub/b.yaml",
            "facets/./sub/../a.yaml",
            "facets/rel.yaml",
            "facets/abs.yaml",
            "facets/leak.yaml",
            "facets/linked/c.yaml",
            "facets/out/secret.yaml",
            "facets/dangling.yaml",
            "facets/missing.yaml",
            "facets/bad.yaml",
            "facets/big.yaml",
            "facets/pipe.yaml",
            "facets/sub",
            "facets/",
            "../outside/secret.yaml",
            "shared/c.yaml",
        ];
        let whole = FileTree::open(&root).expect("open");
        // A sub-tree: `facets/rel.yaml` leads out of it, though not out of the tree.
        let facets = whole.subtree("facets").expect("subtree");
        for (tree, under) in [(&whole, ""), (&facets, "facets/")] {
            let dirs = ResolvedDirs::default();
            for round in 0..2 {
                for path in paths {
                    let path = path.strip_prefix(under).unwrap_or(path);
                    let want = tree.read_to_string(path).map(Arc::<str>::from);
                    let got = tree.read_text(path, &dirs);
                    assert_eq!(got, want, "{path} (round {round})");
                }
            }
        }
        let dirs = ResolvedDirs::default();
        assert_eq!(
            &*whole.read_text("facets/a.yaml", &dirs).expect("a"),
            "a: 1\n"
        );
        assert_eq!(
            whole
                .read_text("facets/leak.yaml", &dirs)
                .map_err(|e| e.kind),
            Err(TreeErrorKind::OutsideRoot)
        );
        assert_eq!(
            whole
                .read_text("facets/pipe.yaml", &dirs)
                .map_err(|e| e.kind),
            Err(TreeErrorKind::NotRegular)
        );
        assert_eq!(
            facets.read_text("rel.yaml", &dirs).map_err(|e| e.kind),
            Err(TreeErrorKind::OutsideRoot)
        );
        // The directory, once resolved, is replaced by a symlink leading out: a file
        // only the outside holds is still refused, never read.
        std::fs::rename(root.join("facets"), root.join("moved")).expect("rename");
        symlink(base.join("outside"), root.join("facets")).expect("link");
        assert_eq!(
            whole
                .read_text("facets/secret.yaml", &dirs)
                .map_err(|e| e.kind),
            Err(TreeErrorKind::OutsideRoot)
        );
    }

    #[test]
    fn open_archive_from_disk() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.tar.gz");
        let mut file = std::fs::File::create(&path).expect("create");
        file.write_all(&archive(&[(
            "facets/a.yaml",
            tar::EntryType::Regular,
            b"a",
        )]))
        .expect("write");
        let tree = FileTree::open(&path).expect("open");
        assert!(
            tree.root_dir().is_none(),
            "an archive has no directory on disk"
        );
        assert_eq!(tree.list("facets").expect("list"), ["facets/a.yaml"]);
    }
}
