"""A deterministic evaluation set for recall in Chinese, built like ``recall_eval.py``'s English one: months of
chat-log daily notes between three Chinese speakers and one English speaker (Nora), the facts an agent would
extract from them (each person's in their own language), a few hundred facts about each person's everyday life,
and questions whose evidence lines are known.

Chinese is written without spaces, so a question is never a substring of its answer: "王芳喜欢喝什么茶" against
"王芳现在只喝乌龙茶，不喝咖啡了". Events recur across people on purpose, as in the English set. Each question has a
kind; its evidence is the line that raised the event and the fact made of it:

- ``who``: who did something, no name in the question;
- ``when``: when a named person did something;
- ``which``: which thing of a kind a named person did ("王芳报了哪门课");
- ``entity-less``: a topic question, no name;
- ``shares-a-word``: a named person's event asked with other words around one word of the fact ("样品什么时候发货");
- ``paraphrase``: the event described without any of the fact's words ("谁不能吃坚果类的东西" for 花生过敏);
- ``en-about-zh``: an English question about a Chinese fact;
- ``zh-about-en``: a Chinese question about Nora's English fact.

The first five share words with their fact, and a lexical ranking should find them; the last three need more
than the words.

Usage: ``python benchmarks/recall_eval_zh.py OUT`` writes ``OUT/workspace``, ``OUT/life`` and
``OUT/questions.json``; ``benchmarks/recall.py --eval-only`` builds and scores it beside the English set.
"""

# Full-width punctuation is what people type.
# ruff: noqa: RUF001, RUF002

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import asdict, dataclass
from datetime import date, timedelta
from pathlib import Path

from recall_eval import Question

START = date(2026, 1, 5)
DAYS = 150
TODAY = START + timedelta(days=DAYS + 2)
SEED = 23
# (label in the daily notes, English name, memory slug, writes Chinese)
PEOPLE = (
    ("王芳", "Wang Fang", "wang-fang", True),
    ("李伟", "Li Wei", "li-wei", True),
    ("张敏", "Zhang Min", "zhang-min", True),
    ("Nora", "Nora", "nora", False),
)
ZH_NAME = {"Nora": "诺拉"}


@dataclass(frozen=True)
class Template:
    """One kind of event: the line raising it and the fact in both languages, and its questions."""

    raise_zh: str
    raise_en: str
    fact_zh: str
    fact_en: str
    when_zh: str
    when_en: str
    who_zh: str
    which_zh: str
    share_zh: str
    values: tuple[tuple[str, str, str], ...]  # (Chinese, English, a description sharing no word with either)


EVENTS = (
    Template("我报名了社区中心的{x}。", "I signed up for the {x} at the community centre.",
             "{w}报名了社区中心的{x}", "{w} signed up for the {x} at the community centre",
             "{w}什么时候报名了{x}？", "When did {w} sign up for the {x}?", "谁报名了社区中心的{x}？",
             "{w}在社区中心报了哪门课？", "{w}在社区中心学什么？",
             (("陶艺课", "pottery class", "在学捏泥巴做碗"), ("拉丁舞课", "salsa class", "在学一种热情的双人舞步"))),
    Template("我们从收容所领养了一只{x}。", "We adopted a {x} from the shelter.",
             "{w}从收容所领养了一只{x}", "{w} adopted a {x} from the shelter",
             "{w}哪天领养了{x}？", "When did {w} adopt the {x}?", "谁领养了一只{x}？",
             "{w}领养的是哪种动物？", "{w}从收容所带回了什么？",
             (("灰色小兔子", "grey rabbit", "家里多了长耳朵爱吃胡萝卜的小家伙"),
              ("比格犬", "beagle puppy", "家里多了一条猎犬"))),
    Template("我今天早上跑完了{x}。", "I ran the {x} this morning.",
             "{w}跑完了{x}", "{w} ran the {x}",
             "{w}哪天跑了{x}？", "When did {w} run the {x}?", "谁跑完了{x}？",
             "{w}跑完的是哪场比赛？", "{w}早上跑完了什么？",
             (("城市半程马拉松", "city half marathon", "参加了二十多公里的长距离竞赛"),
              ("公园五公里", "park 5k", "在绿地里参加了短距离竞赛"))),
    Template("公司终于批准了{x}项目。", "My {x} project at work was approved at last.",
             "{w}负责的{x}项目获得公司批准", "{w}'s {x} project at work was approved",
             "{w}的{x}项目是什么时候批准的？", "When was {w}'s {x} project approved?", "谁的{x}项目批准了？",
             "{w}的哪个项目批准了？", "公司批准了{w}的什么？",
             (("仓库迁移", "warehouse migration", "搬库房的计划得到了领导同意"),
              ("计费系统重写", "billing rewrite", "重新开发收费软件的打算通过了"))),
    Template("我订了夏天去{x}的机票。", "I booked flights for a trip to {x} in the summer.",
             "{w}订了夏天去{x}的机票", "{w} booked flights to {x} for the summer",
             "{w}什么时候订了去{x}的机票？", "When did {w} book the flights to {x}?", "谁夏天要去{x}？",
             "{w}夏天要去哪个城市？", "{w}的机票是去哪里的？",
             (("京都", "Kyoto", "买好了飞往日本古都的航班"), ("里斯本", "Lisbon", "买好了飞往葡萄牙首都的航班"))),
    Template("我们家的{x}昨晚又漏水了。", "Our {x} started leaking again last night.",
             "{w}家的{x}漏水了", "{w}'s {x} is leaking",
             "{w}家的{x}什么时候漏水的？", "When did {w}'s {x} start leaking?", "谁家的{x}漏水了？",
             "{w}家哪个地方漏水？", "{w}家什么东西漏水？",
             (("厨房水槽", "kitchen sink", "做饭处下面滴滴答答"),
              ("浴室天花板", "bathroom ceiling", "洗澡间头顶往下滴"))),
    Template("客户的{x}安排好了，由我负责。", "The client's {x} is arranged and I am in charge of it.",
             "{w}负责客户的{x}", "{w} is in charge of the client's {x}",
             "{w}负责的{x}是哪天？", "When is the {x} {w} is in charge of?", "谁负责客户的{x}？",
             "{w}负责客户的哪项安排？", "{w}接待客户的安排是什么？",
             (("工厂参观", "factory visit", "带来访者看生产车间"),
              ("样品发货", "sample shipment", "把测试用的货物寄走"))),
    Template("我从邻居那里买了一辆二手{x}。", "I bought a secondhand {x} from a neighbour.",
             "{w}从邻居那里买了一辆二手{x}", "{w} bought a secondhand {x} from a neighbour",
             "{w}什么时候买了二手{x}？", "When did {w} buy the secondhand {x}?", "谁买了一辆二手{x}？",
             "{w}从邻居那里买了哪种车？", "{w}从邻居那儿买了什么二手货？",
             (("公路自行车", "road bike", "从隔壁淘了旧的两轮脚踏车"),
              ("电动滑板车", "electric scooter", "从隔壁淘了旧的充电代步工具"))),
    Template("上完网课以后我拿到了{x}证书。", "I got a certificate in {x} after the online course.",
             "{w}拿到了{x}证书", "{w} got a certificate in {x}",
             "{w}什么时候拿到了{x}证书？", "When did {w} get the {x} certificate?", "谁拿到了{x}证书？",
             "{w}拿到的是哪个方向的证书？", "{w}上网课考了什么证书？",
             (("数据分析", "data analysis", "考过了处理数字报表的考试"),
              ("项目管理", "project management", "考过了带团队排计划的考试"))),
    Template("我去老剧院听了一场{x}音乐会。", "I went to a {x} concert at the old theatre.",
             "{w}去老剧院听了{x}音乐会", "{w} went to a {x} concert at the old theatre",
             "{w}什么时候去听了{x}音乐会？", "When did {w} go to the {x} concert?", "谁去听了{x}音乐会？",
             "{w}听的是哪种音乐会？", "{w}在老剧院听了什么？",
             (("爵士", "jazz", "欣赏了萨克斯风现场演出"), ("钢琴", "piano", "欣赏了黑白键乐器独奏"))),
    Template("我们在菜园里种了{x}。", "We planted {x} in the allotment garden.",
             "{w}在菜园里种了{x}", "{w} planted {x} in the allotment garden",
             "{w}什么时候种了{x}？", "When did {w} plant the {x}?", "谁在菜园里种了{x}？",
             "{w}在菜园里种的是哪种作物？", "{w}的菜园里有什么？",
             (("西红柿", "tomatoes", "地里栽了红色果实的蔬菜"), ("草莓", "strawberries", "地里栽了带籽的红色小水果"))),
    Template("医生说我对{x}过敏。", "The doctor says I am allergic to {x}.",
             "{w}对{x}过敏", "{w} is allergic to {x}",
             "{w}什么时候知道自己对{x}过敏？", "When did {w} learn about the {x} allergy?", "谁对{x}过敏？",
             "{w}对哪种食物过敏？", "医生说{w}不能碰什么？",
             (("花生", "peanuts", "不能吃坚果类的东西"), ("芒果", "mango", "不能吃某种热带水果"))),
    Template("我现在只喝{x}，不喝咖啡了。", "I only drink {x} now, no more coffee.",
             "{w}现在只喝{x}，不喝咖啡了", "{w} only drinks {x} now, no more coffee",
             "{w}什么时候开始只喝{x}？", "When did {w} switch to {x}?", "谁现在只喝{x}？",
             "{w}现在喝哪种茶？", "{w}喜欢喝什么茶？",
             (("乌龙茶", "oolong tea", "改喝半发酵的饮品"), ("龙井茶", "Longjing tea", "改喝杭州产的绿色饮品"))),
)  # fmt: skip
ASK = (("真的吗？后来呢？", "Really? And then?"), ("不错啊，感觉怎么样？", "Nice, how does it feel?"))
REPLY = (("挺好的，下次细说。", "Good so far, more next time."), ("还行吧，有点累。", "Fine, a bit tiring."))
FOLLOW = ("{x}进行得怎么样了？", "How is the {x} going?")
# Someone else names the thing in passing: its words in lines that are about no event of anyone's.
CHATTER = (("我有个朋友也想试试{x}。", "A friend of mine wants to try the {x} too."),
           ("听说{x}最近很火，是真的吗？", "I hear the {x} is all the rage, is it true?"))  # fmt: skip
SMALL_TALK = (
    (("这周过得怎么样？", "How was your week?"), ("挺忙的，工作很多。", "Busy, lots of work.")),
    (
        ("昨晚睡得好吗？", "Did you sleep well?"),
        ("不太好，邻居又在开派对。", "Not really, the neighbours had a party."),
    ),
    (("我们还去喝咖啡吗？", "Still on for coffee?"), ("去，老地方见。", "Yes, same place as always.")),
    (("你妈妈身体怎么样？", "How is your mum?"), ("好多了，谢谢关心。", "Much better, thanks.")),
    (("看天气预报了吗？", "Seen the forecast?"), ("周末一直下雨。", "Rain all weekend.")),
)
# Everyday facts an agent keeps about each person: the distractors most of a real memory is made of.
FILLER_ZH = ("{w}在{m}月和同事开会讨论了{t}", "{w}说{t}的事要等到{m}月再定", "{w}请大家{m}月前把{t}的资料发给他")
FILLER_EN = ("{w} met colleagues in month {m} about the {t}", "{w} says the {t} waits until month {m}")
TOPICS = (
    ("年度预算", "annual budget"), ("团队招聘", "team hiring"), ("办公室装修", "office renovation"),
    ("季度报告", "quarterly report"), ("供应商合同", "supplier contract"), ("培训计划", "training plan"),
    ("网站改版", "website redesign"), ("客户回访", "customer follow-up"), ("年会活动", "annual party"),
    ("安全检查", "safety inspection"), ("报销流程", "expense process"), ("库存盘点", "stock count"),
)  # fmt: skip


@dataclass
class Event:
    who: int  # index into PEOPLE
    day: date
    template: int
    value: int
    lines: list[tuple[int, str]]  # (speaker, text)
    refs: list[str]
    fact: str = ""
    fact_id: str = ""


def _say(person: int, zh: str, en: str) -> tuple[int, str]:
    return person, zh if PEOPLE[person][3] else en


def _events(rng: random.Random) -> list[Event]:
    events: list[Event] = []
    for n, t in enumerate(EVENTS):
        for who in rng.sample(range(len(PEOPLE)), rng.choice((2, 3))):
            v = rng.randrange(len(t.values))
            zh, en, _ = t.values[v]
            other = rng.choice([p for p in range(len(PEOPLE)) if p != who])
            lines = [_say(who, t.raise_zh.format(x=zh), t.raise_en.format(x=en)), _say(other, *rng.choice(ASK))]
            lines.append(_say(who, *rng.choice(REPLY)))
            label, english, _, chinese = PEOPLE[who]
            fact = t.fact_zh.format(w=label, x=zh) if chinese else t.fact_en.format(w=english, x=en)
            day = START + timedelta(days=rng.randrange(DAYS))
            events.append(Event(who, day, n, v, lines, [], fact))
            later = day + timedelta(days=rng.randrange(7, 40))
            if later < TODAY:  # weeks later someone asks how it went: the topic's words again
                ask = _say(other, FOLLOW[0].format(x=zh), FOLLOW[1].format(x=en))
                events.append(Event(who, later, n, v, [ask, _say(who, *rng.choice(REPLY))], []))
        for zh, en, _ in t.values:
            for who in rng.sample(range(len(PEOPLE)), 2):
                zh_line, en_line = rng.choice(CHATTER)
                line = _say(who, zh_line.format(x=zh), en_line.format(x=en))
                day = START + timedelta(days=rng.randrange(DAYS))
                events.append(Event(who, day, n, 0, [line, _say((who + 1) % len(PEOPLE), *rng.choice(REPLY))], []))
    return events


def _write_notes(out: Path, rng: random.Random, events: list[Event]) -> None:
    by_day: dict[date, list[Event]] = {}
    for event in events:
        by_day.setdefault(event.day, []).append(event)
    for day in sorted(by_day):
        lines = [f"# {day.isoformat()}", ""]
        for session, event in enumerate(by_day[day], 1):
            other = next((s for s, _ in event.lines if s != event.who), (event.who + 1) % len(PEOPLE))
            lines += [f"## 第{session}次聊天：{PEOPLE[event.who][0]}和{PEOPLE[other][0]}", ""]
            ask, reply = rng.choice(SMALL_TALK)
            lines += [f"- **{PEOPLE[other][0]}**: {_say(other, *ask)[1]}"]
            lines += [f"- **{PEOPLE[event.who][0]}**: {_say(event.who, *reply)[1]}"]
            for speaker, text in event.lines:
                lines.append(f"- **{PEOPLE[speaker][0]}**: {text}")
                event.refs.append(f"memory/{day.isoformat()}.md:{len(lines)}")
            lines.append("")
        path = out / "workspace/memory" / f"{day.isoformat()}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines), encoding="utf-8")


def _write_facts(out: Path, rng: random.Random, events: list[Event]) -> int:
    written = 0
    for p, (label, english, slug, chinese) in enumerate(PEOPLE):
        mine = sorted((e for e in events if e.who == p and e.fact), key=lambda e: e.day)
        facts = []
        for n, event in enumerate(mine, 1):
            event.fact_id = f"{slug}-{n:03d}"
            day = event.day.isoformat()
            facts.append({"id": event.fact_id, "fact": event.fact, "category": "event", "status": "active",
                          "timestamp": day, "source": f"memory/{day}.md"})  # fmt: skip
        for n in range(60):
            zh, en = rng.choice(TOPICS)
            month = rng.randrange(1, 13)
            text = rng.choice(FILLER_ZH).format(w=label, t=zh, m=month) if chinese else None
            text = text or rng.choice(FILLER_EN).format(w=english, t=en, m=month)
            facts.append({"id": f"{slug}-{500 + n}", "fact": text, "category": "context", "status": "active"})
        folder = out / "life/areas/people" / slug
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "items.json").write_text(json.dumps(facts, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        title = f"{label} ({english})" if chinese else f"{label} ({ZH_NAME[label]})"
        about = "一个朋友，我们每一两周聊一次。" if chinese else "A friend; we talk every week or two."
        (folder / "summary.md").write_text(f"# {title}\n\n{about}\n", encoding="utf-8")
        written += len(facts)
    return written


def _questions(events: list[Event]) -> list[Question]:
    out: list[Question] = []
    raised = [e for e in events if e.fact]
    for event in raised:
        t = EVENTS[event.template]
        zh, en, _ = t.values[event.value]
        label, english, _, chinese = PEOPLE[event.who]
        hop = [event.refs[0], event.fact_id]
        if chinese:
            out.append(Question("when", t.when_zh.format(w=label, x=zh), [hop]))
            out.append(Question("which", t.which_zh.format(w=label), [hop]))
            out.append(Question("shares-a-word", t.share_zh.format(w=label), [hop]))
            out.append(Question("en-about-zh", t.when_en.format(w=english, x=en), [hop]))
        else:
            out.append(Question("zh-about-en", t.when_zh.format(w=ZH_NAME[label], x=zh), [hop]))
    groups: dict[tuple[int, int], list[Event]] = {}
    for event in raised:
        groups.setdefault((event.template, event.value), []).append(event)
    for (n, v), same in sorted(groups.items()):
        zh, _, description = EVENTS[n].values[v]
        hops = [r for e in same if PEOPLE[e.who][3] for r in (e.refs[0], e.fact_id)]
        if hops:
            out.append(Question("who", EVENTS[n].who_zh.format(x=zh), [hops]))
            out.append(Question("paraphrase", f"谁{description}？", [hops]))
        if len(same) == 1 and PEOPLE[same[0].who][3]:
            out.append(Question("entity-less", f"{zh}的事后来怎么样了？", [[same[0].refs[0], same[0].fact_id]]))
    return out


def build(out: Path, seed: int = SEED) -> list[Question]:
    rng = random.Random(seed)
    events = _events(rng)
    _write_notes(out, rng, events)
    _write_facts(out, rng, events)
    questions = _questions(events)
    (out / "questions.json").write_text(
        json.dumps({"today": TODAY.isoformat(), "questions": [asdict(q) for q in questions]}, ensure_ascii=False),
        encoding="utf-8",
    )
    return questions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    questions = build(args.out, args.seed)
    print(json.dumps({k: sum(q.kind == k for q in questions) for k in sorted({q.kind for q in questions})}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
