//! Damage made by hand to a database file, page by page, shared by the
//! datastore's damage matrix, the server's start on a damaged file and
//! the salvage benchmark.
#![allow(dead_code)] // each includer uses a different subset

/// SQLite's default page size, which every file of these tests has.
pub const PAGE: usize = 4096;
/// The type byte of a table b-tree leaf page.
pub const TABLE_LEAF: u8 = 0x0D;
/// The type byte of an index b-tree leaf page.
pub const INDEX_LEAF: u8 = 0x0A;
/// The type byte of a table b-tree interior page.
pub const TABLE_INTERIOR: u8 = 0x05;

/// The pages of a file whose type byte is `kind`, as 0-based indexes with
/// their cell counts (rows, on a table leaf). Page 1, which holds the
/// file's header, is left out.
pub fn pages_of_kind(file: &[u8], kind: u8) -> Vec<(usize, u16)> {
    (1..file.len() / PAGE)
        .filter_map(|index| {
            let start = index * PAGE;
            (file[start] == kind).then(|| {
                let cells = u16::from_be_bytes([file[start + 3], file[start + 4]]);
                (index, cells)
            })
        })
        .collect()
}

/// Overwrites page `index` (0-based) with bytes from a fixed seed.
pub fn scramble(file: &mut [u8], index: usize, seed: u64) {
    let mut state = seed | 1;
    for byte in &mut file[index * PAGE..(index + 1) * PAGE] {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        *byte = state as u8;
    }
}
