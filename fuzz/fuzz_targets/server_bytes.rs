//! Bytes into a ready server session
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, data)) = data.split_first() else {
        return;
    };
    let mut pair = common::ready_pair(selector);
    let now = pair.now;
    common::drain(&mut pair.server);
    common::feed(&mut pair.server, now, data);
});
