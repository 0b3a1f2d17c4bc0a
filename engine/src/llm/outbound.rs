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

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// Why `ip` may not be reached, or `None` for a public address.
pub fn refused(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return refused_v4(v4);
            }
            let s = v6.segments();
            if v6.is_loopback() {
                Some("loopback")
            } else if v6.is_unspecified() {
                Some("unspecified")
            } else if s[0] & 0xfe00 == 0xfc00 {
                Some("private (unique local)")
            } else if s[0] & 0xffc0 == 0xfe80 {
                Some("link-local")
            } else if s[0] & 0xff00 == 0xff00 {
                Some("multicast")
            } else if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
                // NAT64: the IPv4 address it translates to decides.
                refused_v4(Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8))
            } else if s[0] == 0 && s[1..6] == [0, 0, 0, 0, 0] {
                // Deprecated IPv4-compatible ::a.b.c.d.
                refused_v4(Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8))
            } else {
                None
            }
        }
    }
}

fn refused_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_private() {
        Some("private")
    } else if ip.is_link_local() {
        Some("link-local (where cloud metadata services answer)")
    } else if a == 0 {
        Some("unspecified")
    } else if a == 100 && (64..128).contains(&b) {
        Some("shared (carrier-grade NAT)")
    } else if ip.is_multicast() || ip.is_broadcast() || a >= 240 {
        Some("multicast or reserved")
    } else if a == 192 && b == 0 && ip.octets()[2] == 0 {
        Some("reserved (IETF protocol assignments)")
    } else {
        None
    }
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

/// At most `max` characters of a remote service's reply, with control
/// characters, quotes and non-ASCII escaped, for an error message.
pub fn excerpt(text: &str, max: usize) -> String {
    let mut out: String = text.chars().take(max).flat_map(char::escape_default).collect();
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
        assert_eq!(excerpt("<b>\"hi\"</b>\n", 100), "\"<b>\\\"hi\\\"</b>\\n\"");
        assert_eq!(excerpt(&"x".repeat(300), 5), "\"xxxxx…\"");
    }
}
