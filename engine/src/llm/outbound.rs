//! Outbound requests to addresses a member chose (the "HTTP endpoint" RAG
//! method's URL, which anyone with edit rights on a project sets). Unless
//! the owner allowed it, such a request may not reach loopback, private,
//! link-local (cloud metadata at 169.254.169.254), carrier-grade-NAT,
//! multicast or reserved addresses: otherwise a member could make the
//! server call its own admin ports or the cloud's metadata service and read
//! the reply in an item's error.
//!
//! The check runs where the address is chosen, not on the URL's text:
//! IP literals are checked before any request, and host names are resolved
//! by [`GuardedResolver`], which hands the HTTP client only the addresses
//! that passed, so the connection goes to a checked address (a DNS answer
//! that changes between a check and the connect cannot slip past).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// IANA's IPv4 Special-Purpose Address Registry (as of 2025), plus
/// multicast: prefix, length, what it is, and whether the registry calls it
/// globally reachable. The most specific matching entry decides, so the
/// few global entries inside a refused block (PCP and TURN anycast in
/// 192.0.0.0/24) stay reachable.
const V4_SPECIAL: &[(u32, u8, &str, bool)] = &[
    (0x0000_0000, 8, "unspecified (\"this network\")", false),
    (0x0a00_0000, 8, "private", false),
    (0x6440_0000, 10, "shared (carrier-grade NAT)", false),
    (0x7f00_0000, 8, "loopback", false),
    (0xa9fe_0000, 16, "link-local (where cloud metadata services answer)", false),
    (0xac10_0000, 12, "private", false),
    (0xc000_0000, 24, "reserved (IETF protocol assignments)", false),
    (0xc000_0000, 29, "reserved (IPv4 service continuity)", false),
    (0xc000_0008, 32, "reserved (IPv4 dummy address)", false),
    (0xc000_0009, 32, "PCP anycast", true),
    (0xc000_000a, 32, "TURN anycast", true),
    (0xc000_00aa, 32, "reserved (NAT64/DNS64 discovery)", false),
    (0xc000_00ab, 32, "reserved (NAT64/DNS64 discovery)", false),
    (0xc000_0200, 24, "documentation (TEST-NET-1)", false),
    (0xc01f_c400, 24, "AS112", true),
    (0xc034_c100, 24, "AMT", true),
    (0xc058_6300, 24, "reserved (deprecated 6to4 relay anycast)", false),
    (0xc0a8_0000, 16, "private", false),
    (0xc0af_3000, 24, "AS112 direct delegation", true),
    (0xc612_0000, 15, "benchmarking", false),
    (0xc633_6400, 24, "documentation (TEST-NET-2)", false),
    (0xcb00_7100, 24, "documentation (TEST-NET-3)", false),
    (0xe000_0000, 4, "multicast", false),
    (0xf000_0000, 4, "reserved", false),
    (0xffff_ffff, 32, "broadcast", false),
];

/// IANA's IPv6 Special-Purpose Address Registry (as of 2025), plus
/// multicast and the deprecated site-local block, as [`V4_SPECIAL`].
/// Prefixes that carry an IPv4 address are decided by that address instead
/// (see [`embedded_v4`]).
const V6_SPECIAL: &[(u128, u8, &str, bool)] = &[
    (0, 128, "unspecified", false),
    (1, 128, "loopback", false),
    (0x0000_0000_0000_0000_ffff_0000_0000_0000, 96, "IPv4-translated (SIIT)", false),
    (0x0064_ff9b_0001_0000_0000_0000_0000_0000, 48, "local-use IPv4/IPv6 translation", false),
    (0x0100_0000_0000_0000_0000_0000_0000_0000, 64, "discard-only", false),
    (0x0100_0000_0000_0001_0000_0000_0000_0000, 64, "dummy IPv6 prefix", false),
    (0x2001_0000_0000_0000_0000_0000_0000_0000, 23, "reserved (IETF protocol assignments)", false),
    (0x2001_0000_0000_0000_0000_0000_0000_0000, 32, "Teredo (tunnels to an IPv4 address)", false),
    (0x2001_0001_0000_0000_0000_0000_0000_0001, 128, "PCP anycast", true),
    (0x2001_0001_0000_0000_0000_0000_0000_0002, 128, "TURN anycast", true),
    (0x2001_0001_0000_0000_0000_0000_0000_0003, 128, "DNS-SD service registration anycast", true),
    (0x2001_0002_0000_0000_0000_0000_0000_0000, 48, "benchmarking", false),
    (0x2001_0003_0000_0000_0000_0000_0000_0000, 32, "AMT", true),
    (0x2001_0004_0112_0000_0000_0000_0000_0000, 48, "AS112", true),
    (0x2001_0010_0000_0000_0000_0000_0000_0000, 28, "reserved (deprecated ORCHID)", false),
    (0x2001_0020_0000_0000_0000_0000_0000_0000, 28, "ORCHIDv2", true),
    (0x2001_0030_0000_0000_0000_0000_0000_0000, 28, "drone remote ID", true),
    (0x2001_0db8_0000_0000_0000_0000_0000_0000, 32, "documentation", false),
    (0x2620_004f_8000_0000_0000_0000_0000_0000, 48, "AS112 direct delegation", true),
    (0x3fff_0000_0000_0000_0000_0000_0000_0000, 20, "documentation", false),
    (0x5f00_0000_0000_0000_0000_0000_0000_0000, 16, "reserved (SRv6 SIDs)", false),
    (0xfc00_0000_0000_0000_0000_0000_0000_0000, 7, "private (unique local)", false),
    (0xfe80_0000_0000_0000_0000_0000_0000_0000, 10, "link-local", false),
    (0xfec0_0000_0000_0000_0000_0000_0000_0000, 10, "site-local (deprecated)", false),
    (0xff00_0000_0000_0000_0000_0000_0000_0000, 8, "multicast", false),
];

/// The most specific entry holding `addr`, an address of `width` bits
/// (entries: prefix, its length, what it is, globally reachable).
fn special(
    entries: impl Iterator<Item = (u128, u8, &'static str, bool)>,
    addr: u128,
    width: u32,
) -> Option<(&'static str, bool)> {
    entries
        .filter(|(prefix, len, ..)| *len == 0 || (addr ^ prefix) >> (width - u32::from(*len)) == 0)
        .max_by_key(|(_, len, ..)| *len)
        .map(|(_, _, what, global)| (what, global))
}

/// The IPv4 address an IPv6 address stands for, where its prefix embeds
/// one and a connection to it would reach that IPv4 host: IPv4-mapped
/// (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`, deprecated), NAT64's
/// well-known prefix (`64:ff9b::a.b.c.d`) and 6to4 (`2002:aabb:ccdd::`).
fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = v6.segments();
    let v4 = |hi: u16, lo: u16| Some(Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8));
    // IPv4-compatible (but for `::` and `::1`) and NAT64 carry it last.
    let compatible = s[0..6] == [0; 6] && !(s[6] == 0 && s[7] <= 1);
    let nat64 = s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0; 4];
    if let Some(v4) = v6.to_ipv4_mapped() {
        Some(v4)
    } else if compatible || nat64 {
        v4(s[6], s[7])
    } else if s[0] == 0x2002 {
        v4(s[1], s[2])
    } else {
        None
    }
}

/// Why `ip` may not be reached, or `None` for a public address: every
/// address IANA's special-purpose registries do not call globally
/// reachable is refused, as are multicast and addresses that embed a
/// refused IPv4 address.
pub fn refused(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => refused_v4(v4),
            None => not_global(special(V6_SPECIAL.iter().copied(), u128::from(v6), 128)),
        },
    }
}

fn refused_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let entries = V4_SPECIAL.iter().map(|&(p, l, w, g)| (u128::from(p), l, w, g));
    not_global(special(entries, u128::from(u32::from(ip)), 32))
}

/// What a registry entry is, when it is not globally reachable.
fn not_global(entry: Option<(&'static str, bool)>) -> Option<&'static str> {
    entry.filter(|(_, global)| !global).map(|(what, _)| what)
}

/// How to allow what was refused, for every refusal's message.
pub const HOW_TO_ALLOW: &str = "the owner can allow private addresses under Settings (\"The HTTP method may call \
     private addresses\") or with `assay serve --allow-private-urls`";

/// The refusal for one address, in words a member can act on.
pub fn refusal(host: &str, ip: IpAddr, why: &str) -> String {
    let at = if host == ip.to_string() { host.to_string() } else { format!("{host} ({ip})") };
    format!("{at} is a {why} address, which the HTTP method may not call; {HOW_TO_ALLOW}")
}

/// Checks a URL's host when it is an IP literal (names are checked when
/// they are resolved). `Err`: the refusal, or why the URL is unusable.
pub fn check_url(url: &str) -> Result<(), String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("\"{url}\" is not a URL: {e}"))?;
    let host = parsed.host_str().ok_or_else(|| format!("\"{url}\" has no host"))?;
    // The URL parser has already normalised 2130706433, 0x7f.1 and the
    // like to dotted IPv4; IPv6 literals keep their brackets.
    let Ok(ip) = host.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() else {
        return Ok(());
    };
    match refused(ip) {
        Some(why) => Err(refusal(&ip.to_string(), ip, why)),
        None => Ok(()),
    }
}

/// A refused resolution; recognised in the client's error chain so that
/// it fails the item at once instead of being retried.
#[derive(Debug)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// Resolves names with the system resolver and keeps only public
/// addresses; a name with none left is refused.
#[derive(Debug, Default)]
pub struct GuardedResolver;

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let mut first_refusal = None;
            let public: Vec<SocketAddr> = found
                .into_iter()
                .filter(|a| match refused(a.ip()) {
                    None => true,
                    Some(why) => {
                        first_refusal.get_or_insert_with(|| refusal(&host, a.ip(), why));
                        false
                    }
                })
                .collect();
            if public.is_empty() {
                let reason = first_refusal.unwrap_or_else(|| format!("{host} has no address"));
                return Err(Box::new(Refused(reason)) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(public.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// The refusal inside a client error, if that is what it was.
pub fn refusal_in(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(r) = s.downcast_ref::<Refused>() {
            return Some(r.0.clone());
        }
        source = s.source();
    }
    None
}

/// At most `max` characters of a remote service's reply, in quotes, for
/// an error message a person reads: line breaks and other whitespace runs
/// become one space and control characters are dropped (an error stays on
/// its line, with no literal `\n` and nothing a terminal would act on);
/// the text is otherwise as the service sent it.
pub fn excerpt(text: &str, max: usize) -> String {
    let mut out = String::new();
    for c in text.chars().take(max) {
        if c.is_whitespace() {
            if !out.ends_with(' ') {
                out.push(' ');
            }
        } else if !c.is_control() {
            out.push(c);
        }
    }
    let mut out = out.trim().to_string();
    if text.chars().nth(max).is_some() {
        out.push('…');
    }
    format!("\"{out}\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_special_addresses_are_refused() {
        for ip in [
            "127.0.0.1",
            "127.8.9.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "224.0.0.1",
            "255.255.255.255",
            "240.0.0.1",
            "::1",
            "::",
            "fd00:ec2::254",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "::127.0.0.1",
        ] {
            assert!(refused(ip.parse().unwrap()).is_some(), "{ip} passed");
        }
        for ip in ["93.184.216.34", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8"] {
            assert_eq!(refused(ip.parse().unwrap()), None, "{ip} refused");
        }
    }

    /// One address inside every entry of IANA's special-purpose registries
    /// (IPv4 and IPv6), written out by hand from the registries rather than
    /// from the tables above, with whether it may be called.
    #[test]
    fn every_special_purpose_prefix_is_decided_as_the_registry_says() {
        let cases = [
            ("0.1.2.3", false),         // 0.0.0.0/8
            ("10.255.0.1", false),      // 10.0.0.0/8
            ("100.127.255.254", false), // 100.64.0.0/10
            ("127.255.255.254", false), // 127.0.0.0/8
            ("169.254.0.1", false),     // 169.254.0.0/16
            ("172.20.1.1", false),      // 172.16.0.0/12
            ("192.0.0.100", false),     // 192.0.0.0/24
            ("192.0.0.7", false),       // 192.0.0.0/29
            ("192.0.0.8", false),       // 192.0.0.8/32
            ("192.0.0.9", true),        // 192.0.0.9/32, PCP anycast: global
            ("192.0.0.10", true),       // 192.0.0.10/32, TURN anycast: global
            ("192.0.0.170", false),     // 192.0.0.170/32
            ("192.0.0.171", false),     // 192.0.0.171/32
            ("192.0.2.55", false),      // 192.0.2.0/24
            ("192.31.196.1", true),     // 192.31.196.0/24, AS112: global
            ("192.52.193.1", true),     // 192.52.193.0/24, AMT: global
            ("192.88.99.1", false),     // 192.88.99.0/24 (deprecated)
            ("192.168.255.1", false),   // 192.168.0.0/16
            ("192.175.48.1", true),     // 192.175.48.0/24: global
            ("198.19.255.1", false),    // 198.18.0.0/15
            ("198.51.100.7", false),    // 198.51.100.0/24
            ("203.0.113.9", false),     // 203.0.113.0/24
            ("239.1.1.1", false),       // 224.0.0.0/4 multicast
            ("250.1.1.1", false),       // 240.0.0.0/4
            ("255.255.255.255", false), // broadcast
            ("::1", false),
            ("::", false),
            ("::ffff:10.0.0.1", false), // IPv4-mapped: its IPv4 decides
            ("::ffff:8.8.8.8", true),
            ("::ffff:0:8.8.8.8", false), // ::ffff:0:0:0/96, IPv4-translated
            ("::ffff:0:127.0.0.1", false),
            ("64:ff9b::8.8.8.8", true), // 64:ff9b::/96: its IPv4 decides
            ("64:ff9b::10.0.0.1", false),
            ("64:ff9b:1::8.8.8.8", false),                   // 64:ff9b:1::/48, local-use
            ("100::1", false),                               // 100::/64 discard-only
            ("100:0:0:1::5", false),                         // 100:0:0:1::/64 dummy
            ("2001:1ff::1", false),                          // 2001::/23
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", false), // 2001::/32 Teredo
            ("2001:1::1", true),                             // PCP anycast
            ("2001:1::2", true),                             // TURN anycast
            ("2001:1::3", true),                             // DNS-SD SRP anycast
            ("2001:1::4", false),
            ("2001:2::1", false),         // 2001:2::/48 benchmarking
            ("2001:3::1", true),          // 2001:3::/32 AMT
            ("2001:4:112::1", true),      // 2001:4:112::/48 AS112
            ("2001:10::1", false),        // 2001:10::/28 deprecated ORCHID
            ("2001:20::1", true),         // 2001:20::/28 ORCHIDv2
            ("2001:30::1", true),         // 2001:30::/28 drone remote ID
            ("2001:db8::1", false),       // documentation
            ("2002:7f00:1::1", false),    // 6to4 of 127.0.0.1
            ("2002:a9fe:a9fe::1", false), // 6to4 of 169.254.169.254
            ("2002:808:808::1", true),    // 6to4 of 8.8.8.8
            ("2620:4f:8000::1", true),    // AS112 direct delegation
            ("3fff:fff::1", false),       // 3fff::/20 documentation
            ("5f00::1", false),           // 5f00::/16 SRv6
            ("fc00::1", false),
            ("fdff::1", false),
            ("fe80::1", false),
            ("febf::1", false),
            ("fec0::1", false), // site-local (deprecated)
            ("ff05::2", false), // multicast
            ("2606:4700::1111", true),
            ("2a00:1450:4001::1", true),
        ];
        for (ip, reachable) in cases {
            let got = refused(ip.parse().unwrap());
            assert_eq!(got.is_none(), reachable, "{ip}: {got:?}");
        }
    }

    #[test]
    fn literal_urls_are_checked_in_every_spelling() {
        for url in [
            "http://127.0.0.1:8000/q",
            "http://[::1]/q",
            "http://2130706433/q",
            "http://0x7f.1/q",
            "http://017700000001/q",
            "http://[::ffff:7f00:1]/",
            "http://169.254.169.254/latest/meta-data/",
        ] {
            let e = check_url(url).unwrap_err();
            assert!(e.contains("may not call") && e.contains("--allow-private-urls"), "{url}: {e}");
        }
        assert!(check_url("https://rag.example.org/query").is_ok());
        assert!(check_url("not a url").unwrap_err().contains("is not a URL"));
    }

    #[tokio::test]
    async fn names_resolving_to_loopback_are_refused() {
        use reqwest::dns::Resolve;
        let err = match GuardedResolver.resolve("localhost".parse().unwrap()).await {
            Ok(_) => panic!("localhost resolved"),
            Err(e) => e,
        };
        let msg = refusal_in(err.as_ref()).expect("a refusal");
        assert!(msg.starts_with("localhost (") && msg.contains("loopback"), "{msg}");
    }

    #[test]
    fn excerpts_are_short_and_escaped() {
        assert_eq!(excerpt("<b>\"hi\"</b>\n", 100), "\"<b>\"hi\"</b>\"");
        assert_eq!(excerpt("{\"a\":\n\n  1,\u{1b}[2J é}", 100), "\"{\"a\": 1,[2J é}\"", "one line, no escape code");
        assert_eq!(excerpt(&"x".repeat(300), 5), "\"xxxxx…\"");
    }
}
