//! The opening books the experiments use (`shared/data`) read whole under the strict rules:
//! strictness refuses typos, not the field's books.

use std::path::Path;

#[test]
fn the_experiments_books_read_whole() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
    let mut books = 0;
    for entry in std::fs::read_dir(&data).expect("../shared/data beside the repository") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "epd") {
            let book = chess_text::read_book(&path).unwrap_or_else(|e| panic!("{e}"));
            let lines = std::fs::read_to_string(&path)
                .unwrap()
                .lines()
                .filter(|l| !l.trim().is_empty() && !l.trim().starts_with('#'))
                .count();
            assert_eq!(book.len(), lines, "{}", path.display());
            books += 1;
        }
    }
    assert!(books >= 2, "{books} books in {}", data.display());
}
