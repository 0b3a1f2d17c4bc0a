//! Assay's vocabulary, declared once for every layer: the engine computes
//! with these types, the store writes and reads them, the server functions
//! send them, the browser (WASM) receives them. Nothing here depends on
//! more than serde (and serde_json, for a method's open table of parameters).
//!
//! A *closed set* (a job's kind, a protocol, a judge, a provider, …) is an
//! enum declared with [`closed_set!`]: it travels over the wire and into
//! the database as its snake_case name ([`ClosedSet::as_str`]), and reading
//! an unknown name is an error ([`Unknown`]) naming the set and the value,
//! never a silent default.
//!
//! A *request* ([`requests`]) is what a stage is asked to do, read the same
//! from a form, the command line and a manifest.
//!
//! A *record* the engine computes and a page shows (a ranking, a study's
//! agreement figures, HieraRAG's tables) is declared here once, by domain,
//! and the engine re-exports it where it is computed.

pub mod corpus;
pub mod defaults;
pub mod judge;
pub mod llm;
pub mod metrics;
pub mod rag;
pub mod requests;
mod sets;
pub mod study;

pub use sets::*;

/// A closed set's name for a value it does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    /// What the set is, in words ("protocol", "a job's kind").
    pub what: &'static str,
    pub value: String,
    /// The names it has.
    pub names: &'static [&'static str],
}

impl std::fmt::Display for Unknown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = match self.names {
            [] => String::new(),
            [one] => (*one).to_string(),
            [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
        };
        write!(f, "{} must be {names}, not \"{}\"", self.what, self.value)
    }
}

impl std::error::Error for Unknown {}

/// What every [`closed_set!`] enum is: a value from a fixed list of names.
pub trait ClosedSet: Sized + Copy + 'static {
    /// What the set is, in words.
    const WHAT: &'static str;
    /// Every value, in declaration order.
    const ALL: &'static [Self];
    /// Every value's name, in the same order.
    const NAMES: &'static [&'static str];
    /// The stored and wire name.
    fn as_str(self) -> &'static str;
    /// The value of a name; exact (no trimming, no case folding).
    fn parse(name: &str) -> Result<Self, Unknown> {
        Self::ALL.iter().copied().find(|v| v.as_str() == name).ok_or_else(|| Unknown {
            what: Self::WHAT,
            value: name.to_string(),
            names: Self::NAMES,
        })
    }
}

/// Declares a closed set: the enum, its names (`Variant = "name"`), what
/// it is in words, `as_str`/`parse`/`ALL`, `Display`, `FromStr`, and serde
/// as the name.
#[macro_export]
macro_rules! closed_set {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident ($what:literal) {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name { $( $(#[$vmeta])* $variant ),+ }

        impl $crate::ClosedSet for $name {
            const WHAT: &'static str = $what;
            const ALL: &'static [$name] = &[$($name::$variant),+];
            const NAMES: &'static [&'static str] = &[$($text),+];
            fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl $name {
            pub const ALL: &'static [$name] = <$name as $crate::ClosedSet>::ALL;
            /// The stored and wire name.
            pub fn as_str(self) -> &'static str {
                <$name as $crate::ClosedSet>::as_str(self)
            }
            /// The value of a stored or wire name (exact).
            pub fn parse(name: &str) -> Result<$name, $crate::Unknown> {
                <$name as $crate::ClosedSet>::parse(name)
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::Unknown;
            fn from_str(s: &str) -> Result<$name, $crate::Unknown> {
                $name::parse(s)
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                let name = <::std::borrow::Cow<'de, str> as ::serde::Deserialize>::deserialize(d)?;
                $name::parse(&name).map_err(::serde::de::Error::custom)
            }
        }
    };
}
