"""Reading LoCoMo-format files."""

from datetime import datetime, timezone

import pytest

from xmemo.bench.locomo.data import parse_date, parse_sample


def test_session_dates_parse():
    assert parse_date("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    assert parse_date("10:37 am on 27 June,  2023") == datetime(2023, 6, 27, 10, 37, tzinfo=timezone.utc)
    with pytest.raises(ValueError):
        parse_date("yesterday")


def test_sample_turns_questions_and_category_5_left_out():
    sample = {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bo",
            "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "Later."}],
            "session_2_date_time": "9:00 am on 2 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "Hi Bo."},
                {"speaker": "Bo", "dia_id": "D1:2", "text": "I adopted a dog."},
            ],
            "session_1_date_time": "8:00 pm on 1 May, 2023",
        },
        "qa": [
            {"question": "What did Bo adopt?", "answer": "a dog", "evidence": ["D1:2"], "category": 4},
            {"question": "Who?", "answer": "x", "evidence": ["D8:6; D2:1"], "category": 1},
            {"question": "Trick?", "adversarial_answer": "y", "evidence": ["D1:1"], "category": 5},
        ],
    }
    conv = parse_sample(sample)
    assert [t.dia_id for t in conv.turns] == ["D1:1", "D1:2", "D2:1"]  # sessions in number order
    assert conv.turns[1].content == "Bo: I adopted a dog."
    assert conv.turns[1].location == "conversations/locomo/conv-x/session_1"  # a conversation (`records.is_conversation`)
    assert conv.turns[1].at > conv.turns[0].at  # turn order kept within a session
    assert [q.category for q in conv.questions] == ["4", "1"]
    assert conv.questions[1].evidence == ("D8:6", "D2:1")
