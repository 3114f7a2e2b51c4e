"""Experiments on LoCoMo, each a named module whose rows put one idea beside `recall`'s
replica (`recall_replica`): the legs they add are functions the later experiments compose
(`class_links.add_leg`, `world_knowledge.top_scores`, `late_interaction.as_leg`)."""
