//! Stockfish's LEB128-compressed tensors (Stockfish 16 and later): the magic
//! `COMPRESSED_LEB128`, a `u32` byte count, then each value as signed LEB128
//! (`nnue_common.h:186-300` at 762dd1da9, `read_leb_128` and `write_leb_128`).
//!
//! Stockfish checks the magic and the byte count only with `assert` (not in release builds);
//! this reader refuses every inconsistency with a clause: a missing magic, a byte count that
//! overruns the file, a value cut off by the byte count, a value that does not fit its type or
//! takes more bytes than its type needs, and bytes left over after the last value.

use std::fmt;

/// The magic before every compressed tensor.
pub const MAGIC: &[u8] = b"COMPRESSED_LEB128";

/// An integer type a compressed tensor holds.
pub trait Leb128Value: Copy {
    /// The type's name in messages.
    const NAME: &'static str;
    /// The most bytes one value takes (7 bits per byte).
    const MAX_BYTES: usize;
    /// The value if it fits the type.
    fn from_i64(v: i64) -> Option<Self>;
    /// The value widened.
    fn to_i64(self) -> i64;
}

impl Leb128Value for i16 {
    const NAME: &'static str = "i16";
    const MAX_BYTES: usize = 3;
    fn from_i64(v: i64) -> Option<i16> {
        i16::try_from(v).ok()
    }
    fn to_i64(self) -> i64 {
        self.into()
    }
}

impl Leb128Value for i32 {
    const NAME: &'static str = "i32";
    const MAX_BYTES: usize = 5;
    fn from_i64(v: i64) -> Option<i32> {
        i32::try_from(v).ok()
    }
    fn to_i64(self) -> i64 {
        self.into()
    }
}

/// The most bytes a compressed tensor of `count` values of `T` takes in a file, magic and byte
/// count included.
pub fn max_bytes<T: Leb128Value>(count: usize) -> u64 {
    (MAGIC.len() + 4) as u64 + (count as u64) * T::MAX_BYTES as u64
}

/// Why a compressed tensor cannot be read. `Display`: a clause.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Leb128Error {
    /// The file ends before the magic and the byte count.
    Truncated,
    /// The magic is not `COMPRESSED_LEB128`.
    Magic,
    /// The byte count runs past the end of the file.
    Overrun {
        /// The byte count.
        count: u64,
        /// Bytes left in the file after it.
        left: usize,
    },
    /// The byte count ends inside the values.
    ShortCount {
        /// Values read.
        read: usize,
        /// Values the tensor has.
        expected: usize,
    },
    /// A value does not fit its type, or takes more bytes than its type needs.
    BadValue {
        /// The value's position in the tensor.
        index: usize,
        /// The type.
        ty: &'static str,
    },
    /// Bytes are left within the byte count after the last value.
    LeftOver(u64),
}

impl fmt::Display for Leb128Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Leb128Error::Truncated => write!(f, "the file ends before its magic and byte count"),
            Leb128Error::Magic => write!(
                f,
                "it does not start with the magic '{}'",
                String::from_utf8_lossy(MAGIC)
            ),
            Leb128Error::Overrun { count, left } => write!(
                f,
                "its byte count {count} runs past the end of the file ({left} bytes left)"
            ),
            Leb128Error::ShortCount { read, expected } => write!(
                f,
                "its byte count ends after {read} of its {expected} values"
            ),
            Leb128Error::BadValue { index, ty } => write!(
                f,
                "its value {index} does not fit {ty} (or is longer than {ty} needs)"
            ),
            Leb128Error::LeftOver(n) => {
                write!(
                    f,
                    "{n} bytes of its byte count are left after its last value"
                )
            }
        }
    }
}

/// Reads a compressed tensor of `count` values at the start of `bytes`: the values and the
/// number of bytes it took.
pub fn read<T: Leb128Value>(bytes: &[u8], count: usize) -> Result<(Vec<T>, usize), Leb128Error> {
    let head = MAGIC.len() + 4;
    if bytes.len() < head {
        return Err(Leb128Error::Truncated);
    }
    if &bytes[..MAGIC.len()] != MAGIC {
        return Err(Leb128Error::Magic);
    }
    let len = u32::from_le_bytes(bytes[MAGIC.len()..head].try_into().expect("four bytes"));
    let body = &bytes[head..];
    if len as usize > body.len() {
        return Err(Leb128Error::Overrun {
            count: len.into(),
            left: body.len(),
        });
    }
    let body = &body[..len as usize];
    let mut values = Vec::with_capacity(count.min(body.len()));
    let mut at = 0;
    for index in 0..count {
        let (mut result, mut shift) = (0i64, 0u32);
        loop {
            let Some(&byte) = body.get(at) else {
                return Err(Leb128Error::ShortCount {
                    read: index,
                    expected: count,
                });
            };
            at += 1;
            if shift as usize >= 7 * T::MAX_BYTES {
                return Err(Leb128Error::BadValue { index, ty: T::NAME });
            }
            result |= i64::from(byte & 0x7F) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                if byte & 0x40 != 0 {
                    result |= -1i64 << shift;
                }
                break;
            }
        }
        values.push(T::from_i64(result).ok_or(Leb128Error::BadValue { index, ty: T::NAME })?);
    }
    if at < body.len() {
        return Err(Leb128Error::LeftOver((body.len() - at) as u64));
    }
    Ok((values, head + body.len()))
}

/// Appends `values` as a compressed tensor, as Stockfish's `write_leb_128` writes it.
pub fn write<T: Leb128Value>(values: &[T], out: &mut Vec<u8>) {
    out.extend_from_slice(MAGIC);
    let count_at = out.len();
    out.extend_from_slice(&[0; 4]);
    let start = out.len();
    for &v in values {
        let mut value = v.to_i64();
        loop {
            let byte = (value & 0x7F) as u8;
            value >>= 7;
            let done = if byte & 0x40 == 0 {
                value == 0
            } else {
                value == -1
            };
            out.push(if done { byte } else { byte | 0x80 });
            if done {
                break;
            }
        }
    }
    let len = u32::try_from(out.len() - start).expect("a tensor of less than 4 GiB");
    out[count_at..start].copy_from_slice(&len.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_in_the_fewest_bytes() {
        let values: Vec<i32> = vec![0, 1, -1, 63, 64, -64, -65, 8191, -8192, i32::MAX, i32::MIN];
        let mut out = Vec::new();
        write(&values, &mut out);
        // 0, 1, -1, 63, -64 take one byte; 64, -65, 8191, -8192 two; the extremes five.
        assert_eq!(out.len(), MAGIC.len() + 4 + 5 + 2 * 4 + 2 * 5);
        let (back, used) = read::<i32>(&out, values.len()).unwrap();
        assert_eq!((back, used), (values, out.len()));
        let shorts: Vec<i16> = vec![i16::MIN, -1, 0, 300, i16::MAX];
        let mut out = Vec::new();
        write(&shorts, &mut out);
        assert_eq!(read::<i16>(&out, 5).unwrap().0, shorts);
    }

    #[test]
    fn every_inconsistency_is_refused() {
        let mut out = Vec::new();
        write(&[1000i32, -5], &mut out);
        assert_eq!(read::<i32>(&out[..10], 2), Err(Leb128Error::Truncated));
        let mut magic = out.clone();
        magic[0] = b'X';
        assert_eq!(read::<i32>(&magic, 2), Err(Leb128Error::Magic));
        assert!(matches!(
            read::<i32>(&out[..out.len() - 1], 2),
            Err(Leb128Error::Overrun { .. })
        ));
        assert_eq!(
            read::<i32>(&out, 3),
            Err(Leb128Error::ShortCount {
                read: 2,
                expected: 3
            })
        );
        assert_eq!(read::<i32>(&out, 1), Err(Leb128Error::LeftOver(1)));
        // 40000 does not fit i16; six continuation bytes are too long for i32.
        let mut big = Vec::new();
        write(&[40000i32], &mut big);
        assert!(matches!(
            read::<i16>(&big, 1),
            Err(Leb128Error::BadValue { index: 0, .. })
        ));
        let mut long = MAGIC.to_vec();
        long.extend_from_slice(&6u32.to_le_bytes());
        long.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x00]);
        assert!(matches!(
            read::<i32>(&long, 1),
            Err(Leb128Error::BadValue { .. })
        ));
    }
}
