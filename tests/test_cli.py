"""Options, config files, the environment, and the promise of one clear line per error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from notifier.cli import main
from tests.conftest import BASE, KEY, Site, pages, urlset


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--batch-size", "0"], "--batch-size"),
        (["--batch-size", "10001"], "--batch-size"),
        (["--batch-size", "many"], "--batch-size"),
        (["--format", "xml"], "--format"),
        (["--initial", "sometimes"], "--initial"),
        (["--initial", "since:forever"], "--initial"),
        (["--rule", "lastmod-bulk"], "ID=LEVEL"),
        (["--rule", "no-such-rule=warn"], "unknown rule"),
        (["--rule", "lastmod-bulk=loud"], 'not "error", "warn" or "off"'),
        (["--key", "short"], "8 to 128 characters"),
        (["--retry-timeout", "-1"], "--retry-timeout"),
        (["--retry-timeout", "nan"], "--retry-timeout"),
        (["--endpoint", "ftp://x"], "--endpoint"),
        (["--max-removed", "lots"], "--max-removed"),
        (["--clock-skew", "later"], "--clock-skew"),
        (["--no-such-option"], "unrecognized arguments"),
        (["--config", "missing.toml"], "no such file"),
    ],
)
def test_a_bad_option_is_one_line_and_exit_2(offline_site: Site, args: list[str], expected: str) -> None:
    offline_site.write(urlset(pages(2)))
    result = offline_site.run(*args)
    assert result.code == 2, result
    assert expected in result.err
    assert result.err.startswith("notify-changes: error: ") and result.err.count("\n") == 1
    assert not offline_site.state.exists()


def test_no_sitemap_given(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "no SITEMAP given" in capsys.readouterr().err


def test_no_key_with_something_to_send_is_exit_2_before_anything_is_written(site: Site) -> None:
    site.write(urlset(pages(2)))
    result = site.run("--initial", "submit", key=False)
    assert result.code == 2 and "INDEXNOW_KEY" in result.err
    assert not site.state.exists()
    assert site.fake is not None and site.fake.posts == []


def test_the_key_comes_from_the_environment(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INDEXNOW_KEY", KEY)
    site.write(urlset(pages(2)))
    assert site.run("--initial", "submit", key=False).code == 0
    assert site.fake is not None and site.fake.posts[0].json["key"] == KEY


def test_config_file_keys_are_the_option_names_and_paths_are_relative_to_it(site: Site, tmp_path: Path) -> None:
    assert site.fake is not None
    config_dir = tmp_path / "conf"
    config_dir.mkdir()
    (config_dir / "notify-changes.toml").write_text(
        f'sitemap = "../public/sitemap.xml"\nstate = "st/state.json"\nbatch-size = 1\n'
        f'endpoint = ["{site.fake.endpoint}"]\ninitial = "submit"\n\n[rules]\n"lastmod-missing" = "off"\n'
    )
    site.write(urlset(pages(3)))
    code = main(["--config", str(config_dir / "notify-changes.toml"), "--key", KEY, "--retry-timeout", "0"])
    assert code == 0
    assert (config_dir / "st" / "state.json").exists()
    assert [len(post.json["urlList"]) for post in site.fake.posts] == [1, 1, 1]


def test_the_command_line_beats_the_environment_beats_the_file(site: Site, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert site.fake is not None
    other_key = "ffffffff00000000"
    site.fake.serve_key("www.shop-site.org", other_key)
    (tmp_path / "notify-changes.toml").write_text(f'key = "aaaaaaaa11111111"\nbatch-size = 2\nendpoint = "{site.fake.endpoint}"\n')
    site.write(urlset(pages(3)))
    monkeypatch.setenv("INDEXNOW_KEY", KEY)
    assert main([str(site.sitemap), "--initial", "submit", "--state", "s1.json"]) == 0
    assert {post.json["key"] for post in site.fake.posts} == {KEY}  # env beats file
    assert [len(post.json["urlList"]) for post in site.fake.posts] == [2, 1]  # file beats default
    site.fake.posts.clear()
    assert main([str(site.sitemap), "--initial", "submit", "--state", "s2.json", "--key", other_key, "--batch-size", "3"]) == 0
    assert [(post.json["key"], len(post.json["urlList"])) for post in site.fake.posts] == [(other_key, 3)]


def test_pyproject_tool_table_is_read(offline_site: Site, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "site"\n\n[tool.notify-changes]\nformat = "json"\n')
    offline_site.write(urlset(pages(2)))
    assert main(["check", str(offline_site.sitemap)]) == 0
    assert json.loads(capsys.readouterr().out)["added"] == 2


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("batch-size = [", "not valid TOML"),
        ("colour = 1", "unknown setting"),
        ("[rules]\nfoo = 'warn'", "unknown rule"),
        ('[rules]\n"lastmod-missing" = false', 'rule lastmod-missing level false (not a string) is not "error", "warn" or "off"'),
        ('[rules]\n"lastmod-mising" = "off"', "unknown rule 'lastmod-mising'; did you mean 'lastmod-missing'?"),
    ],
)
def test_a_bad_config_file_is_exit_2(offline_site: Site, tmp_path: Path, content: str, expected: str) -> None:
    (tmp_path / "notify-changes.toml").write_text(content)
    offline_site.write(urlset(pages(2)))
    result = offline_site.check()
    assert result.code == 2 and expected in result.err and result.err.count("\n") == 1


def test_key_new_writes_a_valid_key_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "static").mkdir()
    assert main(["key", "new", "--write", str(tmp_path / "static")]) == 0
    out = capsys.readouterr().out
    key = out.split("INDEXNOW_KEY=")[1].split()[0]
    assert (tmp_path / "static" / f"{key}.txt").read_text() == key
    assert len(key) == 32


def test_github_actions_env_selects_the_github_format(site: Site, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    outputs = tmp_path / "out.txt"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))
    site.write(urlset({"/a/": "2024-01-01", "/b/": None}))
    result = site.check()
    assert result.code == 0
    assert f"::warning title=lastmod-missing::{BASE}/b/: no lastmod" in result.out
    assert "added=2" in outputs.read_text()


# -- messages a user can act on (#10, item 19) ----------------------------------------------------
def test_a_dry_run_with_no_state_says_what_a_real_run_would_do(offline_site: Site) -> None:
    offline_site.write(urlset(pages(1)))
    result = offline_site.run("--dry-run")
    assert result.code == 0 and "a real run would record a baseline of 1 URL and submit nothing" in result.out
    assert "recorded a baseline" not in result.out and not offline_site.state.exists()
    assert "recorded a baseline of 1 URL and" in offline_site.run().out  # the real run, singular


@pytest.mark.parametrize("order", [["--dry-run", "run"], ["run", "--dry-run"], ["--state", "s.json", "check"]])
def test_the_command_word_may_follow_options(offline_site: Site, order: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    offline_site.write(urlset(pages(2)))
    code = main([*order, str(offline_site.sitemap)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "2 added" in captured.out


def test_a_mistyped_command_is_named(offline_site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    offline_site.write(urlset(pages(1)))
    assert main(["chek", str(offline_site.sitemap)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'chek' is not a command; did you mean `notify-changes check" in err


def test_a_sitemap_named_like_a_command_is_still_a_sitemap(offline_site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    offline_site.write(urlset(pages(1)), "chek.xml")
    assert main(["check", str(offline_site.public / "chek.xml"), "--state", str(offline_site.state)]) == 0


@pytest.mark.parametrize("command", ["run", "check"])
def test_each_command_has_its_own_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith(f"usage: notify-changes {command}")
    assert ("--batch-size" in text) is (command == "run") and ("--initial" in text) is (command == "run")


def test_check_still_accepts_the_options_of_run(offline_site: Site) -> None:
    offline_site.write(urlset(pages(1)))
    assert offline_site.check("--batch-size", "5", "--initial", "submit").code == 0


def test_key_alone_says_what_to_do(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["key"]) == 2
    err = capsys.readouterr().err
    assert "`notify-changes key new`" in err and "required" not in err


def test_a_gz_that_is_not_gzip_says_so(offline_site: Site) -> None:
    offline_site.write(b"\x00\x01 this is no gzip", "sitemap.xml.gz")
    result = offline_site.run(command="check", sitemap=str(offline_site.public / "sitemap.xml.gz"))
    assert result.code == 2 and "named .gz but not gzip data" in result.err and "well-formed" not in result.err


def test_plain_xml_under_a_gz_name_still_reads(offline_site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    offline_site.write(urlset(pages(2)), "sitemap.xml.gz")
    assert main(["check", str(offline_site.public / "sitemap.xml.gz"), "--state", str(offline_site.state)]) == 0


def test_url_lines_in_an_xml_file_suggest_txt(offline_site: Site) -> None:
    offline_site.write(f"{BASE}/a/\n{BASE}/b/\n")
    result = offline_site.check()
    assert result.code == 2 and "name it .txt" in result.err and "Start tag" not in result.err


def test_a_key_file_holding_another_key_says_so(offline_site: Site) -> None:
    offline_site.write(urlset(pages(1)))
    (offline_site.public / f"{KEY}.txt").write_text("another-key-0000")
    result = offline_site.check("--site-dir", str(offline_site.public), "--key", KEY)
    assert result.code == 1
    assert "is in the build but holds another key (anot…), not the key this run uses (0123…)" in result.out
    assert "is not in the build" not in result.out
    (offline_site.public / f"{KEY}.txt").write_text(KEY + "\n")  # a trailing newline is the same key
    assert offline_site.check("--site-dir", str(offline_site.public), "--key", KEY).code == 0


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--dyr-run"], "unrecognized arguments: --dyr-run (did you mean --dry-run?)"),
        (["check", "--sitemapurl", "x"], "(did you mean --sitemap-url?); see `notify-changes check --help`"),
        (["--rule", "lastmod-mising=off"], "did you mean 'lastmod-missing'?"),
    ],
)
def test_a_mistyped_option_or_rule_says_what_was_meant(offline_site: Site, args: list[str], said: str) -> None:
    offline_site.write(urlset(pages(1)))
    result = offline_site.run(*args[1:], command=args[0]) if args[0] == "check" else offline_site.run(*args, command="check")
    assert result.code == 2 and said in result.err and result.err.count("\n") == 1, result.err


def test_one_url_is_spoken_of_as_one(offline_site: Site) -> None:
    offline_site.write(urlset({"/": None}))
    result = offline_site.check()
    assert "the one URL has no lastmod; search engines cannot tell what changed" in result.out
    assert "none of the 1 URLs" not in result.out


def test_key_new_never_writes_into_a_folder_that_is_not_there(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A typo (statc/) would put the key file outside the build, and no deploy would publish it."""
    assert main(["key", "new", "--write", str(tmp_path / "statc")]) == 2
    assert "no such folder; name your site's static folder" in capsys.readouterr().err
    assert not (tmp_path / "statc").exists()


def test_a_second_key_new_in_the_same_folder_names_the_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / "robots.txt").write_text("User-agent: *\n")  # not a key file
    assert main(["key", "new", "--write", str(tmp_path / "static")]) == 0
    first = capsys.readouterr().out.split("INDEXNOW_KEY=")[1].split()[0]
    assert main(["key", "new", "--write", str(tmp_path / "static")]) == 2
    err = capsys.readouterr().err
    assert f"already holds the key file {first[:4]}….txt" in err and first not in err
    assert sorted(path.name for path in (tmp_path / "static").iterdir()) == sorted([f"{first}.txt", "robots.txt"])


@pytest.mark.parametrize("pasted", [f"{KEY}\n", f" {KEY} ", f"{KEY}\r\n"])
def test_a_key_pasted_with_its_newline_is_the_same_key(site: Site, monkeypatch: pytest.MonkeyPatch, pasted: str) -> None:
    site.write(urlset(pages(2)))
    assert site.run().code == 0
    site.write(urlset(pages(3)))
    monkeypatch.setenv("INDEXNOW_KEY", pasted)
    result = site.run(key=False)
    assert result.code == 0, result.err
    assert site.fake is not None and site.fake.posts[-1].json["key"] == KEY


_LEAVING = """
import atexit, sys
from pathlib import Path
hooked = Path(sys.argv[1])
atexit.register(lambda: hooked.write_text("the exit hooks ran"))
sys.argv = ["notify-changes", *sys.argv[2:]]
from notifier._launch import main
main()
print("never: the process ends in main", file=sys.stderr)
"""


def test_the_program_ends_with_its_exit_code_its_output_and_its_exit_hooks(offline_site: Site, tmp_path: Path) -> None:
    """The process ends without freeing what the run made (a million URLs' objects), but the
    report is all out, the code is the run's, and every exit hook ran (connections closed)."""
    import subprocess

    from tests.conftest import program_python

    offline_site.write(urlset({"/a/": "2030-01-01"}))  # a lastmod in the future: exit 1
    hooked = tmp_path / "hooked"
    args = ["check", str(offline_site.sitemap), "--state", str(offline_site.state), "--format", "json"]
    done = subprocess.run([program_python(), "-c", _LEAVING, str(hooked), *args], capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["exit_code"] == 1  # the whole report, flushed
    assert hooked.read_text() == "the exit hooks ran"
    assert "never" not in done.stderr
