//! The integration tests' mini server as a standalone binary, for trying real clients
//! by hand: `cargo run -p strata-wire --example mini_server -- [port] [sha2] [noeof]`,
//! then e.g. `mariadb -h127.0.0.1 -P<port> -uroot -e 'select 1'`.

#[path = "../tests/common/mod.rs"]
mod common;

use std::net::TcpListener;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let port: u16 = args.first().and_then(|p| p.parse().ok()).unwrap_or(0);
    let mut cfg = common::ServerConfig::default();
    if args.iter().any(|a| a == "sha2") {
        cfg.default_plugin = wire::AuthPlugin::CachingSha2Password;
    }
    if args.iter().any(|a| a == "noeof") {
        cfg.deprecate_eof = false;
    }
    let listener = match TcpListener::bind(("127.0.0.1", port)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("bind: {e}");
            std::process::exit(1);
        }
    };
    match listener.local_addr() {
        Ok(a) => println!("listening on {a}"),
        Err(e) => eprintln!("local_addr: {e}"),
    }
    common::serve(listener, cfg);
}
