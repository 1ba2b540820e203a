//! Opens an HTML page in a real headless browser (Debian's `chromium`, which `scripts/test.sh`
//! installs) and checks that it renders with its images.

use std::path::Path;
use std::process::Command;

/// The browser the tests use.
const CHROMIUM: &str = "/usr/bin/chromium";

/// Loads `page` in headless Chromium with a probe that counts, once the page has loaded, the
/// images that decoded (complete, with a width); asserts that there are at least `min_images`
/// and that every one of them rendered. Returns the number of images.
pub fn assert_renders(page: &Path, min_images: usize) -> usize {
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing: the HTML reports are tested in a real browser (scripts/test.sh installs Debian's chromium)"
    );
    let html = std::fs::read_to_string(page).unwrap();
    assert!(html.contains("</body>"), "{}: no </body>", page.display());
    let probe = page.with_extension("probe.html");
    std::fs::write(
        &probe,
        html.replace(
            "</body>",
            "<script>window.addEventListener('load',()=>{const i=[...document.images];\
             document.title='rendered '+i.filter(x=>x.complete&&x.naturalWidth>0).length+' of '+i.length;});</script></body>",
        ),
    )
    .unwrap();
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=30000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!(
            "file://{}",
            probe.canonicalize().unwrap().display()
        ))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    let title = dom
        .split("<title>")
        .nth(1)
        .and_then(|t| t.split("</title>").next())
        .unwrap_or_default();
    let counts: Vec<usize> = title
        .strip_prefix("rendered ")
        .map(|t| t.split(" of ").filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_default();
    assert!(
        counts.len() == 2,
        "{}: the browser did not run the page (title '{title}'): {}",
        page.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        counts[0],
        counts[1],
        "{}: not every image rendered",
        page.display()
    );
    assert!(
        counts[1] >= min_images,
        "{}: {} images, expected at least {min_images}",
        page.display(),
        counts[1]
    );
    counts[1]
}
