//! The server functions' reply encoding: JSON, as Leptos' default, but
//! decoded in the browser from a `&str` rather than from bytes.
//!
//! Why: the browser decodes the same types twice over — replies of server
//! functions (Leptos' `Json` reads them with `serde_json::from_slice`) and
//! the resources the server rendered (`serde_json::from_str`). serde_json's
//! deserializer is generic over its reader, so each type's decoding code was
//! compiled twice into the WASM, once per reader. Reading replies as `&str`
//! shares one copy. The bytes on the wire are the same JSON.

use leptos::server_fn::codec::Post;
use leptos::server_fn::{Bytes, ContentType, Decodes, Encodes, Format, FormatType};
use serde::{de::DeserializeOwned, Serialize};

/// JSON encoding whose decoder reads a `&str` (see the module's docs).
pub struct JsonText;

impl ContentType for JsonText {
    const CONTENT_TYPE: &'static str = "application/json";
}

impl FormatType for JsonText {
    const FORMAT_TYPE: Format = Format::Text;
}

impl<T: Serialize> Encodes<T> for JsonText {
    type Error = serde_json::Error;

    fn encode(output: &T) -> Result<Bytes, Self::Error> {
        serde_json::to_vec(output).map(Bytes::from)
    }
}

impl<T: DeserializeOwned> Decodes<T> for JsonText {
    type Error = serde_json::Error;

    fn decode(bytes: Bytes) -> Result<T, Self::Error> {
        let text = std::str::from_utf8(&bytes).map_err(<serde_json::Error as serde::de::Error>::custom)?;
        serde_json::from_str(text)
    }
}

/// A server function's reply as JSON in the body of its `POST`'s response:
/// every `#[server]` here names it (`output = crate::codec::Json`).
pub type Json = Post<JsonText>;
