//! Every packet decoder of `wire` on arbitrary bytes: a command packet under arbitrary
//! capabilities, a handshake response, and a COM_STMT_EXECUTE parameter block for up to 31
//! parameters with the types it declares (or, without new-params-bound, types from a
//! previous execution). Decoders must return Ok or Err, never panic or allocate without bound.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wire::{decode_command, decode_params, parse_handshake_response, ExecutePacket, ParamType};

fuzz_target!(|data: &[u8]| {
    if data.len() < 5 {
        return;
    }
    let caps = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
    let nparams = (data[4] & 31) as usize;
    let body = &data[5..];
    let _ = decode_command(body.to_vec(), caps);
    let _ = parse_handshake_response(body, caps);
    if let Ok(pkt) = ExecutePacket::parse(body) {
        let mut types: Vec<ParamType> = Vec::new();
        let mut long: Vec<Option<Vec<u8>>> = vec![None; nparams];
        let _ = decode_params(&pkt, nparams, &mut types, &mut long);
        // A second execution that reuses the bound types.
        let _ = decode_params(&pkt, nparams, &mut types, &mut long);
    }
});
