select u.id, count(o.id) as orders from users u left join orders o on o.user_id = u.id where u.active = 1 and o.total > 10 group by u.id order by orders desc limit 5;
