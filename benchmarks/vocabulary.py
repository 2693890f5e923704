"""The words a generated memory is made of: names (English and Chinese), companies, projects, topics, and the
sentence templates of facts and daily-note lines, in both languages. Fixed tuples, so every run draws the same."""

# Full-width punctuation in the Chinese templates is the point: real agents write it.
# ruff: noqa: RUF001

from __future__ import annotations


def words(text: str, sep: str = " ") -> tuple[str, ...]:
    """Word lists are written as one string each so the vocabulary stays readable at a glance."""
    return tuple(text.split(sep))


FIRST = words(
    "Sarah Miguel Nora Priya Jonas Amara Tomasz Elena Kofi Hannah Mateo Ingrid Rafael Yusuf Chloe Dmitri "
    "Leila Oscar Fatima Henrik Aisha Bruno Clara Emeka Freya Gustavo Ines Julian Kaito Lucia Marco Nadia "
    "Omar Paula Quentin Rosa Stefan Talia Ugo Vera Wanda Xavier Yara Zoltan Mia Ada Ben Cora Dev Eli"
)
LAST = words(
    "Chen Ortiz Walsh Patel Berg Okafor Nowak Petrova Mensah Fischer Rossi Lind Alves Demir Laurent Volkov "
    "Haddad Reyes Khan Sorensen Diallo Costa Moreau Eze Holm Pereira Vidal Brandt Sato Romero Bianchi Aziz "
    "Hassan Gomez Dubois Serra Weber Cohen Ferraro Varga Novak Lopez Kowalski Jensen Ito Marsh Quinn Rahman"
)
CN_FAMILY = (("李", "Li"), ("王", "Wang"), ("张", "Zhang"), ("刘", "Liu"), ("陈", "Chen"), ("杨", "Yang"),
             ("赵", "Zhao"), ("黄", "Huang"), ("周", "Zhou"), ("吴", "Wu"), ("徐", "Xu"), ("孙", "Sun"))  # fmt: skip
CN_GIVEN = (("伟", "Wei"), ("芳", "Fang"), ("娜", "Na"), ("敏", "Min"), ("静", "Jing"), ("磊", "Lei"),
            ("洋", "Yang"), ("艳", "Yan"), ("勇", "Yong"), ("杰", "Jie"), ("涛", "Tao"), ("明", "Ming"),
            ("超", "Chao"), ("霞", "Xia"), ("平", "Ping"), ("刚", "Gang"), ("晨", "Chen"), ("倩", "Qian"))  # fmt: skip
COMPANY_A = words(
    "Bright North Blue Iron Silver Cedar Harbor Summit Copper Granite Maple Lumen Polar Quarry Ridge Amber "
    "Coral Delta Echo Falcon Garnet Heron Indigo Juniper Kestrel Linden Meridian Nimbus Orchid Pioneer"
)
COMPANY_B = words("lake wind field stone gate works bridge path line point crest wood water light forge vale")
COMPANY_C = words("Optics Corp Labs Logistics Partners Studio Systems Foods Capital Robotics Health Energy")
CODENAMES = words(
    "Atlas Beacon Cascade Drift Ember Fathom Glacier Halo Ion Jetty Kite Lattice Mosaic Nova Orbit Prism "
    "Quartz Relay Sable Tundra Umbra Vortex Willow Xenon Yonder Zephyr Aurora Basalt Cinder Dune"
)
TOPICS = words(
    "reading list|espresso gear|tax filing|home network|sourdough|climbing routes|japanese lessons|"
    "garden plan|bike maintenance|kitchen renovation|piano practice|photo archive|investment notes|"
    "running plan|wine cellar|board games|travel visas|camera lenses|houseplants|woodworking",
    "|",
)
CATEGORIES = ("context", "preference", "relationship", "status", "milestone", "schedule", "decision")
SOURCES = ("conversation", "email", "calendar", "signal", "manual")
STATUS_OTHER = ("pending", "archived")  # statuses beyond active/superseded, seen in the wild

EN_FACTS = (
    "{name} works with {other} on the quarterly planning cycle",
    "{name} prefers a written agenda the day before any meeting",
    "{name} asked for the {thing} to be ready by {when}",
    "{name} moved the weekly check-in to {day} at {hour}:30",
    "{name} introduced Nora to {other} at the {thing} review",
    "{name} signed off the {thing} budget of {num} USD",
    "Nora owes {name} feedback on the {thing} draft by {when}",
    "{name} is travelling on {when} and answers only on Signal",
    "{name} reported that {other} delayed the {thing} by {small} weeks",
    "{name} wants invoices net-30 and in USD",
    "{name} recommended {other} for the {thing} work",
    "{name} decided to keep the {thing} in-house after talking to {other}",
)
ZH_FACTS = (
    "{name}说{thing}预计{when}完成，{other}负责后续跟进",
    "{name}建议下周{dayzh}和{other}一起开会讨论{thing}",
    "{name}更喜欢用微信沟通，邮件回复通常要等到第二天",
    "{other}的报价是{num}元，{name}认为偏高，需要再谈",
    "{name}确认{thing}的样品已经从深圳发货",
)
THINGS = words(
    "pilot readout|enclosure v2|firmware release|sensor batch|invoice|roadmap|hiring plan|launch deck|"
    "security review|supplier audit|pricing page|onboarding guide|field test|annual report|site visit",
    "|",
)
GENERIC = ("the finance team", "Nora's accountant", "the landlord", "the design agency", "a recruiter", "legal")
KIND_PHRASE = {
    "person": "a person",
    "company": "a company",
    "project": "a project",
    "resource": "a topic",
    "archived": "a past contact",
}
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
DAYS_ZH = ("一", "二", "三", "四", "五")
DAILY_EN = (
    "Checked email: {n} new, {other} asked about the {thing}",
    "Call with {name} about the {thing}; next step is a written summary",
    "{name} confirmed the {thing} date; updated the calendar",
    "Drafted a reply to {name}; waiting on numbers from {other}",
    "Nora blocked the afternoon for the {thing}",
    "Reminder set: follow up with {name} on {when}",
    "Filed receipts and updated the {thing} spreadsheet",
)
DAILY_ZH = (
    "和{name}通了电话，{thing}的进度正常",
    "{name}发来了{thing}的初稿，需要周{dayzh}前回复",
    "提醒：{when}之前确认{other}的报价",
)
