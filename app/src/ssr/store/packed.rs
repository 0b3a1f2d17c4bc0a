//! Long text kept compressed: a job item's result (an answer with its
//! retrieved context, a slice of verdicts with their reasons) and a
//! distinct prompt (an answer's prompt holds the same context again) are
//! stored as zstd frames in a `…_z` column when longer than [`PACK_FROM`]
//! bytes, the text column left empty; shorter ones stay text, as do rows
//! an older version wrote. Readers go through [`unpack`], so nothing above
//! the store sees the difference. An offline seed-000 run's database was
//! half such text (issue #45).

use crate::error::{AppError, AppResult};

/// Texts shorter than this stay as they are: a frame's header and the
/// call cost more than they save on a short text.
pub const PACK_FROM: usize = 512;

/// zstd's fast end: most of the ratio for this kind of text (English and
/// JSON) at a small fraction of the higher levels' time, paid inside the
/// writer's transaction.
const LEVEL: i32 = 1;

/// Frames larger than this are refused when read back: a damaged header
/// must not make the reader allocate whatever it claims.
const MOST: u64 = 1 << 30;

thread_local! {
    // One compression and one decompression context per thread, reused:
    // making one per text (zstd's one-shot functions) allocated and
    // faulted in a fresh workspace each time, most of packing's cost.
    static PACKER: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> = const { std::cell::RefCell::new(None) };
    static UNPACKER: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { std::cell::RefCell::new(None) };
}

/// `text` as stored: `(Some(text), None)` when short, else
/// `(None, Some(frame))`.
pub fn pack(text: &str) -> (Option<&str>, Option<Vec<u8>>) {
    if text.len() < PACK_FROM {
        return (Some(text), None);
    }
    let frame = PACKER.with(|p| {
        let mut p = p.borrow_mut();
        if p.is_none() {
            *p = Some(zstd::bulk::Compressor::new(LEVEL)?);
        }
        p.as_mut().expect("made above").compress(text.as_bytes())
    });
    match frame {
        Ok(frame) => (None, Some(frame)),
        // (Compressing memory into memory does not fail but for lack of it.)
        Err(_) => (Some(text), None),
    }
}

/// The text a row stores, from its text column and its frame column
/// (`what` names the row in an error: a frame that does not decompress is
/// a damaged database, said as such rather than shown as empty).
pub fn unpack(text: Option<String>, frame: Option<Vec<u8>>, what: &str) -> AppResult<Option<String>> {
    let Some(frame) = frame else { return Ok(text) };
    let damaged =
        |why: String| AppError::Failed(format!("{what} is stored compressed and could not be read back ({why})"));
    // Frames made by `pack` say their size.
    let size = match zstd::zstd_safe::get_frame_content_size(&frame) {
        Ok(Some(size)) if size <= MOST => size as usize,
        Ok(Some(size)) => return Err(damaged(format!("it claims {size} bytes"))),
        Ok(None) | Err(_) => return Err(damaged("no zstd frame with its size".into())),
    };
    let bytes = UNPACKER
        .with(|u| {
            let mut u = u.borrow_mut();
            if u.is_none() {
                *u = Some(zstd::bulk::Decompressor::new()?);
            }
            u.as_mut().expect("made above").decompress(&frame, size)
        })
        .map_err(|e| damaged(e.to_string()))?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| AppError::Failed(format!("{what} is stored compressed and is not UTF-8 text when read back")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_text_is_packed_and_read_back_whole_and_a_short_one_stays() {
        let long = "Holmes examined the ledger's entry; ".repeat(40) + "é ✓";
        let (text, frame) = pack(&long);
        assert!(text.is_none());
        let frame = frame.unwrap();
        assert!(frame.len() * 4 < long.len(), "repetitive text packs small: {} of {}", frame.len(), long.len());
        assert_eq!(unpack(None, Some(frame), "x").unwrap().as_deref(), Some(long.as_str()));
        let short = "A one-line reply.";
        assert_eq!(pack(short), (Some(short), None));
        assert_eq!(unpack(Some(short.into()), None, "x").unwrap().as_deref(), Some(short));
        assert_eq!(unpack(None, None, "x").unwrap(), None);
    }

    #[test]
    fn a_damaged_frame_is_an_error_that_names_its_row() {
        let e = unpack(None, Some(b"not a zstd frame".to_vec()), "job 3's item \"q-1\"").unwrap_err();
        assert!(e.to_string().contains("job 3's item \"q-1\" is stored compressed"), "{e}");
        // A frame cut short.
        let (_, frame) = pack(&"Watson wrote it down. ".repeat(60));
        let mut frame = frame.unwrap();
        frame.truncate(frame.len() / 2);
        assert!(unpack(None, Some(frame), "x").is_err());
    }
}
