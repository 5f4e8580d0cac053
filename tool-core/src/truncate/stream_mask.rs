//! [`StreamMasker`]: secret values masked in output that arrives in pieces.

use std::sync::Arc;

use crate::governance::secrets::Masker;
use crate::tool::context::ToolContext;

/// Masks the secret values of a context's [`SecretStore`](crate::SecretStore)
/// in a byte stream, piece by piece, with the same result as masking the
/// whole stream at once (the pipeline's masking of results): each value, in
/// every form the pipeline masks (raw, JSON-escaped, `Debug`-escaped),
/// becomes its `<secret>key</secret>` placeholder, also when a value is split
/// across two or more pieces.
///
/// It holds back the last `longest form - 1` bytes of what it was given (a
/// value could start there) until more arrives or [`finish`](Self::finish)
/// is called, so its memory is bounded by the longest secret value.
/// A store holds no value shorter than
/// [`MIN_SECRET_LEN`](crate::governance::secrets::MIN_SECRET_LEN) (it refuses
/// them when built), so every stored value is masked. TOTP codes (`*_bu_2fa_code` keys) are
/// computed per call and are not known here: the pipeline masks them in the
/// result only.
///
/// ```
/// use tool_core::{SecretStore, ToolContext};
/// use tool_core::truncate::StreamMasker;
///
/// let store = SecretStore::new().with_secret("key", "sk-12345").unwrap();
/// let ctx = ToolContext::new().with_secrets(store);
/// let mut masker = StreamMasker::for_context(&ctx).unwrap();
/// let mut out = Vec::new();
/// masker.push(b"token: sk-1", &mut out);
/// masker.push(b"2345 done", &mut out);
/// masker.finish(&mut out);
/// assert_eq!(out, b"token: <secret>key</secret> done");
/// ```
#[derive(Clone)]
pub struct StreamMasker {
    masker: Arc<Masker>,
    /// Bytes held back: the longest form minus one.
    keep: usize,
    pending: Vec<u8>,
}

impl std::fmt::Debug for StreamMasker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the pending bytes: they may hold the start of a secret.
        f.debug_struct("StreamMasker")
            .field("keep", &self.keep)
            .field("pending_bytes", &self.pending.len())
            .finish_non_exhaustive()
    }
}

impl StreamMasker {
    /// A masker for the secret values of `ctx`'s secret store; `None` when the
    /// context has no store, or none of its values is long enough to be masked.
    pub fn for_context(ctx: &ToolContext) -> Option<Self> {
        let masker = crate::governance::secrets::masker_for(ctx.secrets(), &[])?;
        let keep = masker.automaton()?.max_pattern_len().saturating_sub(1);
        Some(Self {
            masker,
            keep,
            pending: Vec::new(),
        })
    }

    /// [`for_context`](Self::for_context), and besides the values of the
    /// environment variables withheld from the command, `(name, value)`
    /// (`tool_core::governance::secret_env::scrub_env`'s secrets), each
    /// masked as `<withheld:NAME>` in the same forms: a command that finds
    /// such a value elsewhere (a parent's `/proc/<pid>/environ`, a file)
    /// does not show it. Values shorter than
    /// [`MIN_MASKED_ENV_LEN`](crate::governance::secret_env::MIN_MASKED_ENV_LEN)
    /// characters, and values that are not UTF-8, are not masked. `None`
    /// when there is nothing to mask.
    pub fn for_context_and_env(
        ctx: &ToolContext,
        withheld: &[(String, std::ffi::OsString)],
    ) -> Option<Self> {
        let masker = crate::governance::secrets::masker_with_env(ctx.secrets(), withheld)?;
        let keep = masker.automaton()?.max_pattern_len().saturating_sub(1);
        Some(Self {
            masker,
            keep,
            pending: Vec::new(),
        })
    }

    /// Masks `bytes` (after what was held back) and appends to `out` all that
    /// can no longer be part of a secret value.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        self.pending.extend_from_slice(bytes);
        // Every occurrence that starts before `cut` ends within `pending`, so
        // the leftmost-longest choice among them is final.
        let cut = self.pending.len().saturating_sub(self.keep);
        let emitted = self.mask_before(cut, out);
        self.pending.drain(..emitted);
    }

    /// Like [`push`](Self::push), but holds back only what could still
    /// become a secret value: the longest end of the stream that is the
    /// beginning of a masked form (usually nothing), not the last
    /// `longest form - 1` bytes. For output that may pause for a long
    /// time mid-line (a prompt, a progress bar): what cannot be part of a
    /// value is passed on at once. Same result as [`push`](Self::push)
    /// once [`finish`](Self::finish)ed.
    pub fn push_eager(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        self.pending.extend_from_slice(bytes);
        let cut = self.pending.len() - self.masker.open_tail(&self.pending);
        let emitted = self.mask_before(cut, out);
        self.pending.drain(..emitted);
    }

    /// How many bytes of `page`, the start of a stream's unread part that
    /// goes on after it, can be shown on their own (masked whole) without
    /// showing part of a secret value: `page` up to the longest end that is
    /// the beginning of a masked form, extended to the end of a value that
    /// starts before that cut. The rest belongs to the next page. Used by
    /// readers that page through a stream (`job_output`), so that a value
    /// straddling a page cut is never shown in two halves.
    pub fn page_len(&self, page: &[u8]) -> usize {
        let mut cut = page.len() - self.masker.open_tail(page);
        if let Some(ac) = self.masker.automaton() {
            for m in ac.find_iter(page) {
                if m.start() >= cut {
                    break;
                }
                cut = cut.max(m.end());
            }
        }
        cut
    }

    /// Masks and appends everything held back.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        let emitted = self.mask_before(self.pending.len(), out);
        self.pending.drain(..emitted);
    }

    /// Appends `pending` up to `cut` to `out`, masked; a match starting before
    /// `cut` is replaced whole, even when it ends after it. Returns how many
    /// bytes of `pending` were consumed.
    fn mask_before(&self, cut: usize, out: &mut Vec<u8>) -> usize {
        let mut pos = 0;
        if let Some(ac) = self.masker.automaton() {
            for m in ac.find_iter(&self.pending[..]) {
                if m.start() >= cut {
                    break;
                }
                out.extend_from_slice(&self.pending[pos..m.start()]);
                out.extend_from_slice(self.masker.replacement(m.pattern().as_usize()).as_bytes());
                pos = m.end();
            }
        }
        let end = cut.max(pos);
        out.extend_from_slice(&self.pending[pos..end]);
        end
    }
}
