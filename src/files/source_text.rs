//! A file's text as the source map holds it: in memory, or let go of once parsed and
//! read again from disk only when a message needs it. A run that composes once
//! (`bpc compose`) lets go of its facets' texts: at 10 000 facets they are a tenth of
//! the peak memory, and most runs print no message into them. The text read again is
//! used only if it is the text that was parsed (same length and hash): a file changed
//! since has no text to show, rather than a wrong one.

use rustc_hash::FxHasher;
use std::hash::Hasher;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

#[derive(Debug)]
pub(super) enum SourceText {
    Kept(Arc<str>),
    OnDisk(OnDisk),
}

#[derive(Debug)]
pub(super) struct OnDisk {
    disk: PathBuf,
    len: usize,
    hash: u64,
    /// The text read again, once; `None` if the file is gone or changed.
    again: OnceLock<Option<Arc<str>>>,
}

impl SourceText {
    /// `text`, to be read again from `disk` when needed.
    pub(super) fn on_disk(text: &str, disk: PathBuf) -> SourceText {
        SourceText::OnDisk(OnDisk {
            disk,
            len: text.len(),
            hash: fingerprint(text),
            again: OnceLock::new(),
        })
    }

    /// The text; `None` for a text let go of whose file has changed since.
    pub(super) fn get(&self) -> Option<&Arc<str>> {
        match self {
            SourceText::Kept(text) => Some(text),
            SourceText::OnDisk(on_disk) => on_disk.again.get_or_init(|| on_disk.read()).as_ref(),
        }
    }
}

impl OnDisk {
    /// The file read again, if it is still the text parsed. Whatever took its place
    /// since is not followed or waited on: a symlink is not opened, a FIFO does not
    /// block, and no more than the parsed length is read (`/dev/zero`).
    fn read(&self) -> Option<Arc<str>> {
        use std::io::Read;
        let mut options = std::fs::OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
        }
        let file = options.open(&self.disk).ok()?;
        let meta = file.metadata().ok()?;
        if !meta.is_file() || meta.len() != self.len as u64 {
            return None;
        }
        let mut bytes = Vec::with_capacity(self.len);
        file.take(self.len as u64 + 1)
            .read_to_end(&mut bytes)
            .ok()?;
        let text = String::from_utf8(bytes).ok()?;
        (text.len() == self.len && fingerprint(&text) == self.hash).then(|| Arc::from(text))
    }
}

/// A hash of the whole text: FxHash reads eight bytes a step, so hashing every facet
/// of a large template costs a few milliseconds.
fn fingerprint(text: &str) -> u64 {
    let mut hasher = FxHasher::default();
    hasher.write(text.as_bytes());
    hasher.finish()
}
