//! Bytes into a ready client session (with requests in flight)
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, data)) = data.split_first() else {
        return;
    };
    let mut pair = common::ready_pair(selector);
    let now = pair.now;
    common::drain(&mut pair.client);
    common::feed(&mut pair.client, now, data);
});
